"""Bringing the lockfile in line with what the files reference.

Entries still referenced are kept as they are (moving them forward is `update`'s
work); new ones are resolved concurrently; entries no file references any more
are dropped. Any failure leaves the old lockfile byte-identical. The network
stack is imported only when something must be resolved: `pin` without
`--resolve` never pays for it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pinguard import lockfile
from pinguard.lockfile import LockEntry, locked_key
from pinguard.options import Options
from pinguard.reference import Reference
from pinguard.resolve import Resolved, failure_lines
from pinguard.scanning import Scan


@dataclass(frozen=True)
class LockUpdate:
    """What `update_lockfile` did: the entries it resolved and added, how many it kept and dropped."""

    new: tuple[LockEntry, ...]
    kept: int
    dropped: int

    def lines(self, path: Path) -> list[str]:
        """What `lock` and `pin --resolve` say of it."""
        locked = [f"locked {entry.name}:{entry.tag}@{entry.digest}\n" for entry in self.new]
        return [*locked, f"{path}: {len(self.new)} new, {self.kept} kept, {self.dropped} dropped\n"]


def update_lockfile(result: Scan, options: Options) -> LockUpdate | None:
    """Bring the lockfile in line with what `result` references; None (and nothing written) on failure.

    Each reference that could not be resolved is reported on `options.stderr`.
    """
    with lockfile.exclusive(options.lockfile):
        current, text = lockfile.read_with_text(options.lockfile)
        wanted = _wanted(result)
        missing = [ref for key, ref in wanted.items() if current.get(*key) is None]
        new_entries = _resolve(missing, options)
        if new_entries is None:
            return None
        updated = current.only(wanted.keys()).with_entries(new_entries)
        if options.provenance:  # entries locked before without it are looked at now; new ones came with theirs
            checked = _with_provenance([entry for entry in updated if entry.evidence is None], options)
            if checked is None:
                return None
            updated = updated.with_entries(checked)
        dropped = len(current) - len(current.only(wanted.keys()))
        if lockfile.dumps(updated) != text:
            lockfile.write(options.lockfile, updated)
    return LockUpdate(tuple(new_entries), len(updated) - len(new_entries), dropped)


def _wanted(result: Scan) -> dict[tuple[str, str], Reference]:
    """Each lock key referenced, with the reference to resolve it by (a written digest wins)."""
    wanted: dict[tuple[str, str], Reference] = {}
    for found in result.found:
        if found.reference is None:
            continue
        key = locked_key(found.reference)
        if key is not None and (key not in wanted or (found.reference.digest and not wanted[key].digest)):
            tag = found.reference.tag or "latest"
            wanted[key] = found.reference.with_tag(tag)
    return wanted


def _with_provenance(entries: list[LockEntry], options: Options) -> list[LockEntry] | None:
    """The entries with what was found of their provenance; None (reported) when any search failed."""
    if not entries:
        return []
    from pinguard.online import entries_with_evidence, open_client

    with open_client(options) as client:
        checked = entries_with_evidence(client, entries, options)
    if checked is None:
        print(f"pinguard: {options.lockfile} left unchanged", file=options.stderr)
    return checked


def _resolve(references: list[Reference], options: Options) -> list[LockEntry] | None:
    if not references:
        return []
    from pinguard.online import resolve_references  # the network stack, only when something is missing

    outcomes = resolve_references(references, options)
    failures = failure_lines(outcomes)
    for line in failures:
        print(f"pinguard: {line}", file=options.stderr)
    if failures:
        print(f"pinguard: {options.lockfile} left unchanged", file=options.stderr)
        return None
    return [LockEntry.from_resolved(outcome) for outcome in outcomes.values() if isinstance(outcome, Resolved)]
