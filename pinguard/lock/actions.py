"""The lock's `[[action]]` entries: each GitHub Actions ref the workflows use, at the commit it named when locked.

    [[action]]
    repository = "actions/checkout"       # owner/repo, lower-cased: GitHub compares them so
    ref = "v6"                            # as written after `@`, or as a pinned commit's comment names it
    commit = "<40 hex digits>"
    ref_kind = "moving"                   # branch, moving, frozen, tag or commit
    frozen_tag = "v6.0.1"                 # the newest frozen tag of the commit, only when there is one
    resolved_at = "2026-12-02T05:00:00Z"
    ref_found = false                     # only for a commit no tag or branch pointed at when it was locked

A `uses:` finds its entry (`ActionIndex.entry_for`) by the ref it is filed under
(`ActionUse.locked_ref`): the ref written, or for a commit the version its comment names,
which is an entry's ref or its frozen tag; failing both, a commit finds the entry of its
repository that holds it. A pin writes `@<commit> # <version>`, the version being the
frozen tag where there is one, so that it reads back to the same entry.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pinguard.errors import InvalidReference
from pinguard.resolve.actions import ActionKey, RefKind, ResolvedAction
from pinguard.sources.base import ActionUse
from pinguard.uses import COMMIT, parse_uses

# Each field as written, in order: its TOML type and whether it may be left out.
FIELDS: tuple[tuple[str, type, bool], ...] = (
    ("repository", str, False), ("ref", str, False), ("commit", str, False), ("ref_kind", str, False),
    ("frozen_tag", str, True), ("resolved_at", str, False), ("ref_found", bool, True),
)


@dataclass(frozen=True)
class ActionEntry:
    """One locked (repository, ref): every entry can be written and reads back equal."""

    repository: str
    ref: str
    commit: str
    ref_kind: str
    frozen_tag: str | None
    resolved_at: str
    ref_found: bool = True

    def __post_init__(self) -> None:
        try:
            named = parse_uses(f"{self.repository}@{self.ref}")
        except InvalidReference as exc:
            raise ValueError(f"repository and ref: {exc}") from None
        if named.repository != self.repository:
            raise ValueError(f"repository: {self.repository!r} is not lower-cased owner/repo")
        if not COMMIT.fullmatch(self.commit):
            raise ValueError(f"commit: {self.commit!r} is not 40 (or 64) lowercase hex digits")
        if self.ref_kind not in tuple(RefKind):
            raise ValueError(f"ref_kind: {self.ref_kind!r} is not one of {', '.join(RefKind)}")
        if (self.ref_kind == RefKind.COMMIT) != (self.ref == self.commit):
            raise ValueError("ref_kind: `commit` is the kind of a ref that is the commit itself, and only of one")
        if not self.ref_found and self.ref_kind != RefKind.COMMIT:
            raise ValueError("ref_found: only a commit written as the ref can be one no ref pointed at")
        if self.frozen_tag is not None:
            try:
                parse_uses(f"{self.repository}@{self.frozen_tag}")
            except InvalidReference:
                raise ValueError(f"frozen_tag: {self.frozen_tag!r} is no git ref") from None
        if not self.resolved_at:
            raise ValueError("resolved_at: empty")

    @property
    def key(self) -> ActionKey:
        return (self.repository, self.ref)

    @property
    def version(self) -> str:
        """What a pin writes in its comment: the frozen tag, else the ref (a commit's own: its frozen tag or none)."""
        return self.frozen_tag or self.ref

    @classmethod
    def from_resolved(cls, resolved: ResolvedAction) -> ActionEntry:
        return cls(resolved.repository, resolved.ref, resolved.commit, resolved.ref_kind.value, resolved.frozen_tag,
                   resolved.resolved_at, resolved.ref_found)

    def as_values(self) -> dict[str, Any]:
        """The fields as written: `ref_found` only where False, `frozen_tag` only where known."""
        values: dict[str, Any] = {name: getattr(self, name) for name, _, _ in FIELDS}
        if self.ref_found:
            del values["ref_found"]
        if self.frozen_tag is None:
            del values["frozen_tag"]
        return values


@dataclass(frozen=True)
class ActionIndex:
    """The action entries by key, by frozen tag and by commit: what a `uses:` is looked up by, one lookup each."""

    entries: Mapping[ActionKey, ActionEntry] = field(default_factory=dict)
    _frozen: Mapping[ActionKey, ActionEntry] = field(init=False, repr=False, compare=False)
    _commits: Mapping[ActionKey, ActionEntry] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for key, entry in self.entries.items():
            if key != entry.key:
                raise ValueError(f"action {entry.repository}@{entry.ref} filed under {key}")
        object.__setattr__(self, "entries", dict(sorted(self.entries.items())))
        frozen: dict[ActionKey, ActionEntry] = {}
        commits: dict[ActionKey, ActionEntry] = {}
        for entry in self.entries.values():  # sorted: of two alike the first wins, the same every run
            if entry.frozen_tag is not None:
                frozen.setdefault((entry.repository, entry.frozen_tag), entry)
            commits.setdefault((entry.repository, entry.commit), entry)
        object.__setattr__(self, "_frozen", frozen)
        object.__setattr__(self, "_commits", commits)

    def entry_for(self, use: ActionUse) -> ActionEntry | None:
        """The entry `use` is filed under; None when the lock holds none (or it names no remote action)."""
        action, ref = use.action, use.locked_ref
        if action is None or ref is None:
            return None
        entry = self.entries.get((action.repository, ref)) or self._frozen.get((action.repository, ref))
        if entry is None and action.pinned:
            entry = self.entries.get((action.repository, action.ref)) or self._commits.get(
                (action.repository, action.ref))
        return entry
