"""`pinguard pin [PATH...] [--resolve] [--dry-run]`: rewrite references to `name:tag@digest` from the lock.

Offline: digests come from the lockfile only (`--resolve` locks what is missing
first). Only the characters of each reference change; every file is written
atomically, and if any cannot be, none is. A run killed midway is finished or undone by the
next `pin` or `update` (see `pinguard.rewrite`).
"""
from __future__ import annotations

from pinguard import lockfile
from pinguard.journal import recover
from pinguard.lockfile import Lock, locked_key
from pinguard.options import Options
from pinguard.rewrite import Edit, apply, commit, pin_edit, tree_roots, unified_diff
from pinguard.scanning import Scan, ScannedFile, scan_for_writing
from pinguard.sources.base import Found


def pin(paths: list[str], options: Options, *, resolve: bool = False, dry_run: bool = False) -> int:
    if not dry_run:
        recover(tree_roots(paths), options.stderr)  # before reading: a killed run may have left the tree half-renamed
    result = scan_for_writing(paths, options.stderr)
    if result is None:
        return 2
    if resolve:
        from pinguard.commands.lock import update_lockfile  # online only when asked

        if not update_lockfile(result, options):
            return 2
    changes, missing = plan(result, lockfile.read(options.lockfile))
    for found in missing:
        print(f"pinguard: {found.path}:{found.line}:{found.column}: {found.reference} is not in "
              f"{options.lockfile}; run `pinguard pin --resolve` or `pinguard lock`", file=options.stderr)
    if dry_run:
        for scanned, text in changes:
            options.stdout.writelines(unified_diff(scanned.file, text))
        return 1 if changes or missing else 0
    commit([(scanned.file, text) for scanned, text in changes], tree_roots(paths))
    if not options.quiet and changes:
        print(f"pinned {len(changes)} file{'s' if len(changes) != 1 else ''}", file=options.stdout)
    return 1 if missing else 0


def plan(result: Scan, lock: Lock) -> tuple[list[tuple[ScannedFile, str]], list[Found]]:
    """The new text of every file that changes, and the references the lock does not know."""
    changes: list[tuple[ScannedFile, str]] = []
    missing: list[Found] = []
    for scanned in result.files:
        edits: list[Edit] = []
        for found in scanned.found:
            key = locked_key(found.reference) if found.reference else None
            if key is None or found.reference is None:
                continue
            entry = lock.get(*key)
            if entry is None:
                missing.append(found)
            elif found.reference.digest != entry.digest:
                edits.append(pin_edit(found, entry.digest))
        if edits:
            changes.append((scanned, apply(scanned.file.text, edits)))
    return changes, missing
