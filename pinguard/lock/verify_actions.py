"""Is every locked GitHub Actions ref still at its commit? (`verify` and `update`, for `[[action]]` entries.)

One `git ls-remote` per repository, however many of its refs are locked (`pinguard.git.remote`).
A ref that points at another commit now has `moved` (a frozen tag moving is also a problem:
a release re-pointed); a ref no tag or branch has any more is `missing`; a commit written as
the ref is checked to be one some tag or branch still points at (a commit that only a fork
holds runs code the repository never published), and a frozen tag recorded beside a ref to
still name the commit.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pinguard.clock import utc_now
from pinguard.errors import PinguardError
from pinguard.git.refs import RemoteRefs
from pinguard.git.remote import GitSettings, list_refs
from pinguard.lock.actions import ActionEntry
from pinguard.lock.verify import Status
from pinguard.resolve.actions import RefKind, ResolvedAction, resolve_in
from pinguard.resolve.tags import TagRules


@dataclass(frozen=True)
class ActionVerdict:
    entry: ActionEntry
    status: Status  # OK, MOVED, MISSING or ERROR
    current: ResolvedAction | None = None  # for MOVED: where the ref points now
    message: str | None = None
    problems: tuple[str, ...] = ()  # each failing `verify`: a frozen tag moved, a commit no ref names
    old_tags: tuple[str, ...] = ()  # the tags at the locked commit now, and at the current one: what a move says
    new_tags: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.entry.repository}@{self.entry.ref}"

    def to_json(self) -> dict[str, object]:
        return {"repository": self.entry.repository, "ref": self.entry.ref, "commit": self.entry.commit,
                "status": self.status.value, "current_commit": self.current.commit if self.current else None,
                "message": self.message, "problems": list(self.problems)}


def verify_actions(entries: Sequence[ActionEntry], settings: GitSettings, tag_rules: TagRules) -> list[ActionVerdict]:
    """A verdict on each entry, in order: one listing per repository."""
    if not entries:
        return []
    listed = list_refs((entry.repository for entry in entries), settings)
    return judge_all(entries, listed, tag_rules)


def judge_all(entries: Sequence[ActionEntry], listed: Mapping[str, RemoteRefs | PinguardError],
              tag_rules: TagRules) -> list[ActionVerdict]:
    at = utc_now()
    return [judge(entry, listed[entry.repository], tag_rules, at) for entry in entries]


def judge(entry: ActionEntry, refs: RemoteRefs | PinguardError, tag_rules: TagRules, at: str) -> ActionVerdict:
    """What the repository's refs now say of one entry."""
    if isinstance(refs, PinguardError):
        return ActionVerdict(entry, Status.ERROR, message=str(refs))
    problems = _frozen_tag_problems(entry, refs)
    if entry.ref_kind == RefKind.COMMIT:
        if not refs.names(entry.commit):
            problems = (f"no tag or branch of {entry.repository} points at {entry.commit}: it may exist only in a "
                        "fork", *problems)
        return ActionVerdict(entry, Status.OK, problems=problems)
    now = refs.lookup(entry.ref)
    if now is None:
        return ActionVerdict(entry, Status.MISSING, message=f"no tag or branch of {entry.repository} is named "
                                                            f"{entry.ref} any more", problems=problems)
    if now == entry.commit:
        return ActionVerdict(entry, Status.OK, problems=problems)
    if entry.ref_kind == RefKind.FROZEN:
        problems = (f"{entry.ref} is a release tag, and it was moved: the release now runs other code", *problems)
    return ActionVerdict(entry, Status.MOVED, resolve_in(refs, entry.ref, tag_rules, at), problems=problems,
                         old_tags=refs.tags_at(entry.commit), new_tags=refs.tags_at(now))


def _frozen_tag_problems(entry: ActionEntry, refs: RemoteRefs) -> tuple[str, ...]:
    if entry.frozen_tag is None:
        return ()
    now = refs.lookup(entry.frozen_tag)
    if now == entry.commit:
        return ()
    where = "is gone" if now is None else f"points at {now} now"
    return (f"frozen_tag: {entry.frozen_tag} {where}, not at {entry.commit}",)
