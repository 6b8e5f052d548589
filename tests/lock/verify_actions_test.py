"""What a repository's refs now say of each locked action ref: ok, moved, missing, and the problems that fail
`verify` (a release tag moved, a frozen tag gone, a commit no ref names)."""
from __future__ import annotations

from pinguard.errors import PinguardError
from pinguard.git.refs import RemoteRefs, parse_ls_remote
from pinguard.lock.actions import ActionEntry
from pinguard.lock.verify import Status
from pinguard.lock.verify_actions import judge
from pinguard.resolve.tags import TagRules

A, B, C = "a" * 40, "b" * 40, "c" * 40
AT = "2026-12-02T00:00:00Z"


def _refs(*lines: str) -> RemoteRefs:
    return parse_ls_remote("".join(f"{line}\n" for line in lines), "actions/checkout")


def _entry(ref: str, commit: str, kind: str, frozen: str | None = None, ref_found: bool = True) -> ActionEntry:
    return ActionEntry("actions/checkout", ref, commit, kind, frozen, AT, ref_found)


def _judge(entry: ActionEntry, *lines: str) -> tuple[Status, str | None, tuple[str, ...]]:
    verdict = judge(entry, _refs(*lines), TagRules(), AT)
    return verdict.status, verdict.current.commit if verdict.current else None, verdict.problems


def test_a_ref_still_at_its_commit_is_ok() -> None:
    assert _judge(_entry("v6", A, "moving", "v6.0.1"), f"{A}\trefs/tags/v6", f"{A}\trefs/tags/v6.0.1") == (
        Status.OK, None, ())


def test_a_moving_tag_re_pointed_has_moved_with_the_tags_of_each_commit() -> None:
    entry = _entry("v6", A, "moving", "v6.0.1")
    verdict = judge(entry, _refs(f"{B}\trefs/tags/v6", f"{A}\trefs/tags/v6.0.1", f"{B}\trefs/tags/v6.0.2"),
                    TagRules(), AT)
    assert (verdict.status, verdict.problems, verdict.old_tags, verdict.new_tags) == (
        Status.MOVED, (), ("v6.0.1",), ("v6", "v6.0.2"))
    assert verdict.current is not None and (verdict.current.commit, verdict.current.frozen_tag) == (B, "v6.0.2")


def test_a_release_tag_moved_is_a_problem_too() -> None:
    status, current, problems = _judge(_entry("v6.0.1", A, "frozen"), f"{B}\trefs/tags/v6.0.1")
    assert (status, current) == (Status.MOVED, B)
    assert problems == ("v6.0.1 is a release tag, and it was moved: the release now runs other code",)


def test_a_deleted_tag_is_missing() -> None:
    status, _, _ = _judge(_entry("v6", A, "moving"), f"{A}\trefs/heads/main")
    assert status is Status.MISSING


def test_a_frozen_tag_gone_from_the_commit_is_a_problem() -> None:
    assert _judge(_entry("v6", A, "moving", "v6.0.1"), f"{A}\trefs/tags/v6", f"{C}\trefs/tags/v6.0.1")[2] == (
        f"frozen_tag: v6.0.1 points at {C} now, not at {A}",)


def test_a_commit_no_ref_names_any_more_is_a_problem() -> None:
    status, _, problems = _judge(_entry(A, A, "commit"), f"{B}\trefs/heads/main")
    assert status is Status.OK
    assert problems == (f"no tag or branch of actions/checkout points at {A}: it may exist only in a fork",)
    assert _judge(_entry(A, A, "commit"), f"{A}\trefs/heads/main")[2] == ()


def test_a_listing_that_failed_is_an_error() -> None:
    verdict = judge(_entry("v6", A, "moving"), PinguardError("actions/checkout: cannot connect"), TagRules(), AT)
    assert (verdict.status, verdict.message) == (Status.ERROR, "actions/checkout: cannot connect")
