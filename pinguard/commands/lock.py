"""`pinguard lock [PATH...]`: resolve every tagged reference found and record it in the lockfile.

Entries still referenced are kept as they are (moving them forward is `update`'s
work); new ones are resolved concurrently; entries no file references any more
are dropped. Any failure leaves the old lockfile byte-identical.
"""
from __future__ import annotations

from pinguard import lockfile
from pinguard.errors import PinguardError
from pinguard.lockfile import LockEntry, locked_key
from pinguard.options import Options
from pinguard.reference import Reference
from pinguard.scanning import Scan, scan_for_writing


def lock(paths: list[str], options: Options) -> int:
    result = scan_for_writing(paths, options.stderr)
    return 0 if result is not None and update_lockfile(result, options) else 2


def update_lockfile(result: Scan, options: Options) -> bool:
    """Bring the lockfile in line with what `result` references; False (and nothing written) on failure."""
    with lockfile.exclusive(options.lockfile):
        current, text = lockfile.read_with_text(options.lockfile)
        wanted = _wanted(result)
        missing = [ref for key, ref in wanted.items() if current.get(*key) is None]
        new_entries = _resolve(missing, options)
        if new_entries is None:
            return False
        updated = current.only(wanted.keys()).with_entries(new_entries)
        dropped = len(current) - len(current.only(wanted.keys()))
        if lockfile.dumps(updated) != text:
            lockfile.write(options.lockfile, updated)
    if not options.quiet:
        for entry in new_entries:
            print(f"locked {entry.name}:{entry.tag}@{entry.digest}", file=options.stdout)
        kept = len(updated) - len(new_entries)
        print(f"{options.lockfile}: {len(new_entries)} new, {kept} kept, {dropped} dropped", file=options.stdout)
    return True


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


def _resolve(references: list[Reference], options: Options) -> list[LockEntry] | None:
    if not references:
        return []
    from pinguard.registry.cache import RegistryCache  # the network stack, only when something is missing
    from pinguard.registry.client import RegistryClient
    from pinguard.resolve import Resolver

    with RegistryClient(options.registry, RegistryCache(options.cache_dir)) as client:
        outcomes = Resolver(client, options.platforms).resolve_all(references)
    entries: list[LockEntry] = []
    failed = False
    for reference, outcome in outcomes.items():
        if isinstance(outcome, PinguardError):
            print(f"pinguard: {reference.familiar()}: {outcome}", file=options.stderr)
            failed = True
        else:
            entries.append(LockEntry.from_resolved(outcome))
    if failed:
        print(f"pinguard: {options.lockfile} left unchanged", file=options.stderr)
        return None
    return entries
