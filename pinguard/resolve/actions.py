"""A GitHub Actions ref resolved to its commit: what a repository's refs say of it (records; the listing is `git`'s).

A ref is told apart the way images' tags are (`pinguard.resolve.tags`): a branch moves with
every push; a tag like `v6` moves with every release, `v6.0.1` is frozen; a commit is itself.
The frozen tag behind a ref is the newest frozen tag of the same commit, so that a pin reads
`@<commit> # v6.0.1`. Nothing here reaches the network: `resolve_actions` hands every
repository to one listing (`pinguard.git.remote.list_refs`: one `git ls-remote` each).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from pinguard.clock import utc_now
from pinguard.errors import PinguardError
from pinguard.git.refs import RemoteRefs
from pinguard.git.remote import GitSettings, list_refs
from pinguard.resolve.tags import TagKind, TagRules
from pinguard.uses import COMMIT

ActionKey = tuple[str, str]  # (owner/repo lower-cased, ref as written or as its version comment names it)


class RefKind(StrEnum):
    BRANCH = "branch"  # moves with every push
    MOVING = "moving"  # a tag re-pointed at each release (`v6`)
    FROZEN = "frozen"  # a release tag (`v6.0.1`)
    TAG = "tag"  # a tag of no version scheme: it may move
    COMMIT = "commit"  # a commit written as the ref: nothing moves it

    @property
    def moves(self) -> bool:
        return self in (RefKind.BRANCH, RefKind.MOVING, RefKind.TAG)


@dataclass(frozen=True)
class ResolvedAction:
    """Where a ref of a repository points, and what else names that commit."""

    repository: str
    ref: str
    commit: str
    ref_kind: RefKind
    frozen_tag: str | None  # the newest frozen tag of the commit, where one is (never the ref itself)
    resolved_at: str
    ref_found: bool = True  # False: a commit no tag or branch points at (it may exist only in a fork)

    @property
    def key(self) -> ActionKey:
        return (self.repository, self.ref)


def resolve_in(refs: RemoteRefs, ref: str, tag_rules: TagRules, resolved_at: str) -> ResolvedAction:
    """`ref` of the repository whose refs are `refs`; a PinguardError when no tag or branch has that name."""
    repository = refs.repository
    if COMMIT.fullmatch(ref):
        return ResolvedAction(repository, ref, ref, RefKind.COMMIT, frozen_behind(refs, ref, tag_rules, None),
                              resolved_at, refs.names(ref))
    commit = refs.lookup(ref)
    if commit is None:
        raise PinguardError(f"{repository}@{ref}: no tag or branch of {repository} has that name")
    kind = ref_kind(refs, ref, tag_rules)
    frozen = None if kind is RefKind.FROZEN else frozen_behind(refs, commit, tag_rules, ref if kind is
                                                               RefKind.MOVING else None)
    return ResolvedAction(repository, ref, commit, kind, frozen, resolved_at)


def ref_kind(refs: RemoteRefs, ref: str, tag_rules: TagRules) -> RefKind:
    """What kind of ref `ref` is in `refs` (a tag before a branch of one name, as git reads a name)."""
    if not refs.is_tag(ref):
        return RefKind.BRANCH
    return {TagKind.MOVING: RefKind.MOVING, TagKind.FROZEN: RefKind.FROZEN}.get(
        tag_rules.kind(refs.repository, ref), RefKind.TAG)


def frozen_behind(refs: RemoteRefs, commit: str, tag_rules: TagRules, moving: str | None) -> str | None:
    """The newest frozen tag at `commit` (one `moving` stands for, where given: `v6` → `v6.0.1`), or None."""
    tags = refs.tags_at(commit)
    candidates = tag_rules.frozen_candidates(refs.repository, moving or "latest", tags)
    return candidates[0] if candidates else None


def resolve_actions(keys: Iterable[ActionKey], settings: GitSettings,
                    tag_rules: TagRules) -> dict[ActionKey, ResolvedAction | PinguardError]:
    """Each (repository, ref) resolved, or why not: one listing per repository, however many refs it has."""
    wanted = list(dict.fromkeys(keys))
    listed = list_refs((repository for repository, _ in wanted), settings)
    return resolved_from(wanted, listed, tag_rules)


def resolved_from(keys: Iterable[ActionKey], listed: Mapping[str, RemoteRefs | PinguardError],
                  tag_rules: TagRules) -> dict[ActionKey, ResolvedAction | PinguardError]:
    """Each key resolved in the listing of its repository (or that listing's error)."""
    at = utc_now()
    outcomes: dict[ActionKey, ResolvedAction | PinguardError] = {}
    for repository, ref in keys:
        refs = listed[repository]
        if isinstance(refs, PinguardError):
            outcomes[(repository, ref)] = refs
            continue
        try:
            outcomes[(repository, ref)] = resolve_in(refs, ref, tag_rules, at)
        except PinguardError as exc:
            outcomes[(repository, ref)] = exc
    return outcomes
