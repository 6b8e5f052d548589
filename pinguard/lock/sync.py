"""Bringing the lockfile in line with what the files reference.

Entries still referenced are kept at their digest (moving them forward is `update`'s
work), each with what the bytes of its digest say (`pinguard.lock.claims`): read from the
content-addressed cache when there, fetched by digest otherwise (a single image's config too),
and its `frozen_tag` asked where it points (one HEAD) unless the cache remembers it serving the
digest; a field they contradict is corrected, with a warning naming it. New ones are resolved
concurrently; entries no file references any more are dropped. Any failure leaves the old
lockfile byte-identical.

The `uses:` of workflows are locked alike (`[[action]]`, `pinguard.lock.actions`): an entry a use
still finds is kept, each (repository, ref) missing is resolved through one `git ls-remote` per
repository; a commit no tag or branch points at, and a pinned commit its version comment does
not name, are warned of. The network stack is imported only here, when `lock` or `pin --resolve`
runs: `pin` without `--resolve` never pays for it.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pinguard.errors import PinguardError
from pinguard.lock import lockfile
from pinguard.lock.actions import ActionEntry
from pinguard.lock.exclusive import exclusive
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.lock.settings import WrittenDigest
from pinguard.provenance.trust import Trust
from pinguard.reference import Reference, locked_key
from pinguard.resolve.resolved import Resolved, failure_lines
from pinguard.resolve.settings import OnlineSettings
from pinguard.scan.paths import Scan, paths_without_references
from pinguard.sources.base import ActionUse, Found

if TYPE_CHECKING:
    from pinguard.registry.client import RegistryClient


@dataclass(frozen=True)
class LockUpdate:
    """What `sync_lock` did: the entries it resolved and added, how many it kept and dropped, and what it warns of."""

    new: tuple[LockEntry, ...]
    kept: int
    dropped: int
    # Fields of kept entries their bytes contradict, corrected; digests written beside a tag that points
    # elsewhere, locked as the policy says; commits no ref names, or not the one their comment names.
    warnings: tuple[str, ...] = ()
    new_actions: tuple[ActionEntry, ...] = ()

    def lines(self, path: Path) -> list[str]:
        """What `lock` and `pin --resolve` say of it."""
        locked = [f"locked {entry.name}:{entry.tag}@{entry.digest}\n" for entry in self.new]
        locked += [f"locked {entry.repository}@{entry.ref} -> {entry.commit}"
                   f"{f' ({entry.frozen_tag})' if entry.frozen_tag else ''}\n" for entry in self.new_actions]
        new = len(self.new) + len(self.new_actions)
        return [*locked, f"{path}: {new} new, {self.kept} kept, {self.dropped} dropped\n"]


def sync_lock(result: Scan, path: Path, settings: OnlineSettings, *,
              mismatch: WrittenDigest = WrittenDigest.REFUSE,
              paths: Sequence[str] = (), allow_empty: bool = False) -> LockUpdate:
    """Bring the lockfile at `path` in line with what `result` (the scan of `paths`) references.

    On failure nothing is written, and the PinguardError names each reference that could not be
    resolved. Entries are dropped only when every path named holds some image reference, unless
    `allow_empty`: a path that holds none is more likely wrong than emptied. `mismatch` is what the
    policy says to lock for a digest written beside a tag that points elsewhere (rule
    tag-digest-mismatch, option `lock`).
    """
    unchanged = f"{path} left unchanged"
    with exclusive(path) as cleared:
        current, text = lockfile.read_with_text(path)
        wanted = _wanted(result)
        kept = current.referenced(wanted.keys())
        held = [(use, current.actions.entry_for(use)) for use in result.actions if use.action is not None]
        kept_actions = {entry.key: entry for _, entry in held if entry is not None}
        dropped = len(current) - len(kept) + len(current.actions.entries) - len(kept_actions)
        if dropped and not allow_empty:
            _refuse_to_drop(paths_without_references(paths, result), dropped, path)
        missing = [found for key, found in wanted.items() if current.get(*key) is None]
        new_entries: list[LockEntry] = []
        warnings: list[str] = []
        updated = kept
        if kept or missing:
            new_entries, warnings, updated = _reach_registries(kept, missing, result, settings, mismatch, unchanged)
        new_actions, action_warnings = _locked_actions([use for use, entry in held if entry is None], settings,
                                                       unchanged)
        updated = updated.with_actions([*kept_actions.values(), *new_actions])
        if lockfile.dumps(updated) != text:
            lockfile.write(path, updated)
    kept_count = len(updated) - len(new_entries) + len(kept_actions)
    return LockUpdate(tuple(new_entries), kept_count, dropped, (*cleared, *warnings, *action_warnings),
                      tuple(new_actions))


def _locked_actions(missing: Sequence[ActionUse], settings: OnlineSettings,
                    unchanged: str) -> tuple[list[ActionEntry], list[str]]:
    """The entries of the uses the lock does not hold, resolved, and a warning for each commit written that no ref
    names or that its comment's version does not name; a PinguardError, a line for each that failed, when any did."""
    if not missing:
        return [], []
    from pinguard.resolve.actions import resolve_actions

    keys = {use: _action_key(use) for use in missing}
    outcomes = resolve_actions(keys.values(), settings.git, settings.tag_rules)
    failures = [f"{use.path}:{use.line}:{use.column}: {outcome}" for use, key in keys.items()
                if isinstance(outcome := outcomes[key], PinguardError)]
    if failures:
        raise PinguardError(unchanged, details=list(dict.fromkeys(failures)))
    resolved = {key: ActionEntry.from_resolved(outcome) for key, outcome in outcomes.items()
                if not isinstance(outcome, PinguardError)}
    return list(resolved.values()), [line for use in missing if (line := _commit_warning(use, resolved[keys[use]]))]


def _action_key(use: ActionUse) -> tuple[str, str]:
    assert use.action is not None and use.locked_ref is not None
    return (use.action.repository, use.locked_ref)


def _commit_warning(use: ActionUse, entry: ActionEntry) -> str | None:
    """What a pinned use, once locked, is warned of: a commit no ref names, or another than its version's."""
    assert use.action is not None
    where = f"{use.path}:{use.line}:{use.column}: {use.value}"
    if not entry.ref_found:
        return (f"{where}: no tag or branch of {entry.repository} points at this commit: it may exist only in a "
                "fork; pin a release of the repository itself")
    if use.action.pinned and entry.commit != use.action.ref:
        return (f"{where}: {entry.ref} is {entry.commit}, not the commit written; locked as {entry.ref} is: "
                "`pinguard pin` writes it, `check` reports it until then (action-mismatch)")
    return None


def _refuse_to_drop(empty: list[str], dropped: int, path: Path) -> None:
    """Stop a run that would drop entries while a path it was given holds no image reference."""
    if empty:
        entries = f"{dropped} entr{'y' if dropped == 1 else 'ies'}"
        raise PinguardError(f"{', '.join(empty)}: no image reference found there, and locking would drop {entries} "
                            f"of {path}: is the path right? Pass --allow-empty to drop them; {path} left unchanged")


def _wanted(result: Scan) -> dict[tuple[str, str], Found]:
    """Each lock key referenced, with the reference to resolve it by (a written digest wins)."""
    wanted: dict[tuple[str, str], Found] = {}
    for found in result.found:
        if found.reference is None:
            continue
        key = locked_key(found.reference)
        if key is not None and (key not in wanted or (found.reference.digest and not _reference(wanted[key]).digest)):
            wanted[key] = found
    return wanted


def _reference(found: Found) -> Reference:
    """What a reference that stands for a lock key is resolved as: untagged, it is `latest`."""
    assert found.reference is not None
    return found.reference.with_tag(found.reference.tag or "latest")


def _unchecked(entries: Iterable[LockEntry]) -> list[LockEntry]:
    """The entries locked without provenance, or before their evidence named its subjects: looked at again."""
    return [entry for entry in entries if entry.evidence is None or entry.evidence.outdated]


def _reach_registries(kept: Lock, missing: list[Found], result: Scan, settings: OnlineSettings, mismatch: WrittenDigest,
                      unchanged: str) -> tuple[list[LockEntry], list[str], Lock]:
    """What is kept held against its bytes, what is missing resolved and, with provenance, every entry's evidence
    looked at: through one client, so that each registry has one pacer, one token and the run one deadline,
    however many steps it takes."""
    from pinguard.resolve.online import open_client

    with open_client(settings) as client:
        checked, corrected = _kept_from_bytes(kept, client, settings, unchanged)
        new_entries, warnings = _resolve(missing, result, settings, client, mismatch, unchanged)
        updated = checked.with_entries(new_entries)
        unchecked = _unchecked(updated) if settings.provenance else []
        if unchecked:
            updated = updated.with_entries(entries_with_evidence(client, unchecked, settings.trust, unchanged))
    return new_entries, [*corrected, *warnings], updated


def _kept_from_bytes(kept: Lock, client: RegistryClient, settings: OnlineSettings,
                     unchanged: str) -> tuple[Lock, list[str]]:
    """The kept entries as the bytes of their digests have them, and a warning for each field corrected; a
    PinguardError, a line for each entry whose bytes could not be read, when any could not."""
    if not kept:
        return kept, []
    from pinguard.lock.verify import kept_from_bytes

    outcomes = kept_from_bytes(list(kept), client, settings)
    failures = [f"{entry.name}:{entry.tag}: {outcome}"
                for entry, outcome in zip(kept, outcomes, strict=True) if isinstance(outcome, PinguardError)]
    if failures:
        raise PinguardError(unchanged, details=failures)
    claims = [outcome for outcome in outcomes if not isinstance(outcome, PinguardError)]
    return Lock().with_entries(c.entry for c in claims), [line for c in claims for line in c.corrections]


def _resolve(missing: list[Found], result: Scan, settings: OnlineSettings, client: RegistryClient,
             mismatch: WrittenDigest, unchanged: str) -> tuple[list[LockEntry], list[str]]:
    """The entries of what is missing, resolved, and a warning for each digest locked as the policy says though
    its tag points elsewhere. A PinguardError when any failed, or when such a digest is written and the policy
    refuses it."""
    if not missing:
        return [], []
    from pinguard.resolve.online import resolve_references

    resolved = _all_resolved(resolve_references([_reference(found) for found in missing], settings, client),
                             unchanged)
    unserved = {reference: item for reference, item in resolved.items() if not item.tag_served}
    said = [f"{where}: {item.unserved()}{_OUTCOME[mismatch]}"
            for reference, item in unserved.items() for where in _written(result, reference)]
    if unserved and mismatch == WrittenDigest.REFUSE:
        raise PinguardError("write the digest the tag points to, or drop it and run `pinguard pin --resolve`; the "
                            "policy's `rules: {tag-digest-mismatch: {lock: tag}}` locks the tag's digest instead, "
                            f"`{{lock: digest}}` the one written; {unchanged}", details=said)
    if unserved and mismatch == WrittenDigest.LOCK_TAG:
        try:
            by_tag = _all_resolved(resolve_references([reference.with_digest(None) for reference in unserved],
                                                      settings, client), unchanged)
        except PinguardError as exc:  # what was said of the written digests still stands
            raise PinguardError(str(exc), details=[*(f"warning: {line}" for line in said), *exc.details]) from None
        resolved.update((reference, by_tag[reference.with_digest(None)]) for reference in unserved)
    return [LockEntry.from_resolved(item) for item in resolved.values()], said


# What `lock` says it does with a digest written beside a tag that points elsewhere, by the policy's choice.
_OUTCOME = {
    WrittenDigest.REFUSE: "",
    WrittenDigest.LOCK_TAG: "; locking the tag's digest, as the policy says (tag-digest-mismatch lock: tag): "
                                  "`pinguard pin` writes it",
    WrittenDigest.KEEP_DIGEST: "; locked as written, as the policy says (tag-digest-mismatch lock: digest): "
                                     "`check` reports it",
}


def _all_resolved(outcomes: Mapping[Reference, Resolved | PinguardError], unchanged: str) -> dict[Reference, Resolved]:
    """Every reference resolved; a PinguardError with a line for each that failed when any did."""
    failures = failure_lines(outcomes)
    if failures:
        raise PinguardError(unchanged, details=failures)
    return {reference: outcome for reference, outcome in outcomes.items() if isinstance(outcome, Resolved)}


def _written(result: Scan, reference: Reference) -> list[str]:
    """`path:line:column` of each place `reference` (a tag and a digest) is written."""
    return [f"{found.path}:{found.line}:{found.column}" for found in result.found if found.reference == reference]


def entries_with_evidence(client: RegistryClient, entries: Sequence[LockEntry], trust: Trust,
                          unchanged: str) -> list[LockEntry]:
    """Lock entries with their provenance found now; when any search failed, a PinguardError with a line
    for each failure, then `unchanged` (what was left as it was)."""
    from pinguard.resolve.online import with_evidence

    checked = with_evidence(client, entries, trust)
    failures = [f"{entry.name}:{entry.tag}: provenance: {outcome}"
                for entry, outcome in zip(entries, checked, strict=True) if isinstance(outcome, PinguardError)]
    if failures:
        raise PinguardError(unchanged, details=failures)
    return [outcome for outcome in checked if not isinstance(outcome, PinguardError)]
