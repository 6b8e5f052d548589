"""Moving moved tags forward: what `update` would change, planned before anything is written.

For every moving tag the scanned files reference and whose tag points to another digest now
(as `verify` finds it, `moved` or `unserved`), the tag is resolved anew and the rebuild
explained. The plan holds the new text of the lockfile and of every file pinning that name:tag;
references without a digest are left to `pin`. Nothing here writes: the command commits the
plan all or nothing, holding the lockfile (`exclusive`) from the plan to the commit.

No field the bytes contradict is carried forward (`pinguard.lock.claims`): an entry checked
whose media type, size, platforms or frozen tag its bytes do not back is written as they have
it, with a warning naming each field, and a moved one is explained from what its bytes say.

The GitHub Actions refs alike: each locked branch or moving tag the workflows use
(`pinguard.lock.verify_actions`, one listing per repository) that points at another commit
now moves forward, every `uses:` pinned to its old commit with it, the version comment too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pinguard.errors import DeadlinePassed, PinguardError
from pinguard.lock import lockfile
from pinguard.lock.actions import ActionEntry
from pinguard.lock.lockfile import Lock, LockEntry, LockfileError
from pinguard.lock.sync import entries_with_evidence
from pinguard.lock.verify import Status, Verdict, deadline_lines, read_lock, verify_with_progress
from pinguard.lock.verify_actions import verify_actions
from pinguard.pin import explain
from pinguard.pin.plan import repin
from pinguard.read.files import TextFile, UnreadableFile
from pinguard.reference import locked_key
from pinguard.registry.client import RegistryClient
from pinguard.resolve.actions import RefKind
from pinguard.resolve.online import open_client
from pinguard.resolve.settings import OnlineSettings
from pinguard.scan.paths import Scan

# What `update` moves forward to where the tag points now: a tag that moved, and one locked at a
# digest it did not point to (the policy's `tag-digest-mismatch: {lock: digest}`), which updating ends.
_MOVED = (Status.MOVED, Status.UNSERVED)
_UNCHANGED = "nothing written"


@dataclass(frozen=True)
class UpdatePlan:
    rebuilds: list[explain.Rebuild]  # each tag that moved, with what changed
    # The new text of each file re-pinned, then of the lockfile when anything moved. The lockfile is
    # staged with the files, so anything failing before the renames (a file changed meanwhile, a
    # symlink out of the tree, a full disk) writes nothing at all. It is renamed last: should a rename
    # fail midway, the files are ahead of the lockfile, which a second `update` repairs (the tag is
    # still `moved` against the lock); a lockfile ahead of the files would look done to `update`.
    changes: list[tuple[TextFile, str]]
    corrected: list[str] = field(default_factory=list)  # each field of an entry its bytes contradict, corrected
    moves: list[explain.ActionMove] = field(default_factory=list)  # each action ref that moved

    @property
    def moved(self) -> int:
        """How many tags and action refs move."""
        return len(self.rebuilds) + len(self.moves)

    @property
    def repinned(self) -> int:
        """How many files besides the lockfile change."""
        return len(self.changes) - 1 if self.moved else 0


def plan_update(result: Scan, path: Path, settings: OnlineSettings) -> UpdatePlan:
    """What moving the moved tags of the lockfile at `path` forward changes, for the files `result` scanned.

    A PinguardError, a line for each entry that could not be checked, when any could not.
    """
    lock = read_lock(path)
    lock_file = _lock_file(path, lock)
    referenced = lock.referenced(locked_key(found.reference) for found in result.found if found.reference is not None)
    candidates = [entry for entry in referenced if entry.tag_kind == "moving"]
    moves = _moved_actions(result, lock, settings)
    with open_client(settings) as client:
        verdicts = _checked(client, candidates, settings)
        rebuilds = _rebuilds(client, verdicts, settings)
    moved = [rebuild.new for rebuild in rebuilds]
    kept = [verdict for verdict in verdicts if verdict.status not in _MOVED and verdict.contradicted]
    moved_actions = {move.old.key: move.new for move in moves}
    changes = [(scanned.file, text) for scanned, text in repin(result, Lock().with_entries(moved), lock, moved_actions)]
    if rebuilds or kept or moves:
        updated = lock.with_entries([*(v.as_served for v in kept), *moved])
        actions = {**lock.actions.entries, **{key: entry for key, entry in moved_actions.items()}}
        changes.append((lock_file, lockfile.dumps(updated.with_actions(actions.values()))))
    return UpdatePlan(rebuilds, changes, [line for v in kept if v.claims is not None for line in v.claims.corrections],
                      moves)


def _moved_actions(result: Scan, lock: Lock, settings: OnlineSettings) -> list[explain.ActionMove]:
    """Each locked action ref the workflows use that moves (a branch, a tag) and points at another commit now; a
    PinguardError, a line for each that could not be checked, when any could not."""
    used = {entry.key: entry for use in result.actions if (entry := lock.actions.entry_for(use)) is not None}
    candidates = [entry for entry in used.values() if RefKind(entry.ref_kind).moves]
    verdicts = verify_actions(candidates, settings.git, settings.tag_rules)
    failed = [f"{verdict.name}: {verdict.status}: {verdict.message}" for verdict in verdicts
              if verdict.status not in (Status.OK, Status.MOVED)]
    if failed:
        raise PinguardError(_UNCHANGED, details=failed)
    return [explain.ActionMove(verdict.entry, ActionEntry.from_resolved(verdict.current), verdict.old_tags,
                               verdict.new_tags)
            for verdict in verdicts if verdict.status is Status.MOVED and verdict.current is not None]


def _lock_file(path: Path, lock: Lock) -> TextFile:
    """The bytes the new lockfile replaces: `commit` writes nothing if they change before it renames."""
    try:
        file = TextFile.read(path)
    except UnreadableFile as exc:
        raise LockfileError(f"{path}: {exc}") from None
    if lockfile.loads(file.text, str(path)) != lock:  # changed since `lock` was read from it
        raise LockfileError(f"{path}: changed while pinguard was working; nothing was written")
    return file


def _checked(client: RegistryClient, candidates: list[LockEntry], settings: OnlineSettings) -> list[Verdict]:
    """A verdict on each candidate; a PinguardError when any cannot be checked."""
    verdicts = verify_with_progress(candidates, client, settings)
    failed = [verdict for verdict in verdicts if verdict.status not in (Status.OK, *_MOVED)]
    if failed:
        said = [f"{verdict.entry.name}:{verdict.entry.tag}: {verdict.status}: {verdict.message}"
                for verdict in failed if not isinstance(verdict.error, DeadlinePassed)]
        raise PinguardError(_UNCHANGED, details=[*said, *(f"error: {line}" for line in deadline_lines(verdicts))])
    return verdicts


def _rebuilds(client: RegistryClient, verdicts: list[Verdict], settings: OnlineSettings) -> list[explain.Rebuild]:
    """Each moved candidate explained, from what its bytes say it was."""
    moved = [(verdict.as_served, LockEntry.from_resolved(verdict.current))
             for verdict in verdicts if verdict.status in _MOVED and verdict.current is not None]
    new = _with_provenance(client, moved, settings)
    return [explain.explain(client, old, entry) for (old, _), entry in zip(moved, new, strict=True)]


def _with_provenance(client: RegistryClient, moved: list[tuple[LockEntry, LockEntry]],
                     settings: OnlineSettings) -> list[LockEntry]:
    """The new entries, with their provenance where the old ones had theirs recorded (or it is asked for)."""
    wanted = [i for i, (old, _) in enumerate(moved) if old.evidence is not None or settings.provenance]
    new = [entry for _, entry in moved]
    checked = entries_with_evidence(client, [new[i] for i in wanted], settings.trust, _UNCHANGED) if wanted else []
    for i, entry in zip(wanted, checked, strict=True):
        new[i] = entry
    return new
