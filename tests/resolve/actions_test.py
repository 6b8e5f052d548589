"""An action's ref resolved in its repository's refs: what kind of ref it is, and the frozen tag behind it."""
from __future__ import annotations

import pytest

from pinguard.errors import PinguardError
from pinguard.git.refs import parse_ls_remote
from pinguard.resolve.actions import RefKind, resolve_in, resolved_from
from pinguard.resolve.tags import TagRules

A, B, C, TAG_OBJECT = "a" * 40, "b" * 40, "c" * 40, "d" * 40
LISTING = "\n".join([
    f"{B}\trefs/heads/main",
    f"{A}\trefs/heads/release",
    f"{A}\trefs/tags/v6.0.0",
    f"{TAG_OBJECT}\trefs/tags/v6.0.1",  # annotated: its object, then the commit it peels to
    f"{B}\trefs/tags/v6.0.1^{{}}",
    f"{B}\trefs/tags/v6",
    f"{B}\trefs/tags/nightly",
    f"{A}\trefs/tags/main",  # a tag and a branch of one name: git reads the tag
]) + "\n"
REFS = parse_ls_remote(LISTING, "actions/checkout")
AT = "2026-12-02T00:00:00Z"


@pytest.mark.parametrize(("ref", "commit", "kind", "frozen"), [
    ("v6", B, RefKind.MOVING, "v6.0.1"),  # the frozen tag of the same commit, peeled from its tag object
    ("v6.0.1", B, RefKind.FROZEN, None),  # frozen itself: nothing behind it
    ("v6.0.0", A, RefKind.FROZEN, None),
    ("release", A, RefKind.BRANCH, "v6.0.0"),
    ("nightly", B, RefKind.TAG, "v6.0.1"),  # a tag of no version scheme: it may move
    ("main", A, RefKind.TAG, "v6.0.0"),  # the tag named main, not the branch
    ("refs/heads/main", B, RefKind.BRANCH, "v6.0.1"),
    (B, B, RefKind.COMMIT, "v6.0.1"),
])
def test_each_kind_of_ref(ref: str, commit: str, kind: RefKind, frozen: str | None) -> None:
    resolved = resolve_in(REFS, ref, TagRules(), AT)
    assert (resolved.commit, resolved.ref_kind, resolved.frozen_tag, resolved.ref_found) == (commit, kind, frozen, True)


def test_a_commit_no_ref_names_is_resolved_as_not_found() -> None:
    resolved = resolve_in(REFS, C, TagRules(), AT)
    assert (resolved.ref_kind, resolved.frozen_tag, resolved.ref_found) == (RefKind.COMMIT, None, False)


def test_a_ref_nobody_has_is_an_error_naming_it() -> None:
    with pytest.raises(PinguardError, match="actions/checkout@v7: no tag or branch of actions/checkout has that name"):
        resolve_in(REFS, "v7", TagRules(), AT)


def test_a_listing_that_failed_fails_each_of_its_refs_alike() -> None:
    failed = PinguardError("acme/deploy: no such repository")
    outcomes = resolved_from([("actions/checkout", "v6"), ("acme/deploy", "v1"), ("acme/deploy", "main")],
                             {"actions/checkout": REFS, "acme/deploy": failed}, TagRules())
    assert outcomes[("acme/deploy", "v1")] is failed and outcomes[("acme/deploy", "main")] is failed
    assert not isinstance(outcomes[("actions/checkout", "v6")], PinguardError)
