"""`pinguard pin [PATH...] [--resolve] [--dry-run] [--allow-empty]`: rewrite references to `name:tag@digest`.

Offline: digests come from the lockfile only (`--resolve` locks what is missing
first, as `lock` does, `--allow-empty` included). Only the characters of each reference change; every file is written
atomically, and if any cannot be, none is. A run killed midway is finished or undone by the
next `pin` or `update` (see `pinguard.write.edits`).
"""
from __future__ import annotations

from pinguard.helm.pinning import POST_RENDER
from pinguard.lock import lockfile
from pinguard.lock.sync import sync_lock
from pinguard.options import Options
from pinguard.read.paths import scan_for_writing
from pinguard.write.commit import commit, tree_roots
from pinguard.write.edits import unified_diff
from pinguard.write.journal import recover
from pinguard.write.plan import plan_pins


def pin(paths: list[str], options: Options, *, resolve: bool = False, dry_run: bool = False,
        allow_empty: bool = False) -> int:
    if not dry_run:
        recover(tree_roots(paths), options.stderr)  # before reading: a killed run may have left the tree half-renamed
    result = scan_for_writing(paths, options.stderr, options.sources)
    if result is None:
        return 2
    if resolve:  # online only when asked, and only for what the lock is missing
        locked = sync_lock(result, options, paths, allow_empty=allow_empty)
        if locked is None:
            return 2
        if not options.quiet:
            options.stdout.writelines(locked.lines(options.lockfile))
    changes, missing, refused = plan_pins(result, lockfile.read(options.lockfile))
    for found in missing:
        print(f"pinguard: {found.path}:{found.line}:{found.column}: {found.reference} is not in "
              f"{options.lockfile}; run `pinguard pin --resolve` or `pinguard lock`", file=options.stderr)
    for found, reason in refused:
        print(f"pinguard: {found.path}:{found.line}:{found.column}: {found.rendered or found.reference} not pinned: "
              f"{reason}; {POST_RENDER}", file=options.stderr)
    if dry_run:
        for scanned, text in changes:
            options.stdout.writelines(unified_diff(scanned.file, text))
        return 1 if changes or missing or refused else 0
    commit([(scanned.file, text) for scanned, text in changes], tree_roots(paths))
    if not options.quiet and changes:
        print(f"pinned {len(changes)} file{'s' if len(changes) != 1 else ''}", file=options.stdout)
    return 1 if missing or refused else 0

