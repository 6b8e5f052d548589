"""`pinguard pin [PATH...] [--resolve] [--dry-run] [--allow-empty] [--to REGISTRY[/PREFIX] [--no-keep-registry]]`:
rewrite references to `name:tag@digest`; with `--to`, to the name of the copy `pinguard copy` made there, digest
unchanged (never one name for two images: `copy.retarget`).

Offline: digests come from the lockfile only (`--resolve` locks what is missing
first, as `lock` does, `--allow-empty` included). Only the characters of each reference change; every file is written
atomically, and if any cannot be, none is. A run killed midway is finished or undone by the
next `pin` or `update` (see `pinguard.write.edits`). Without Helm, a chart's values are never written: a run that
would write one writes nothing, the lockfile included, and says to install helm (`pinguard.write.plan`).
"""
from __future__ import annotations

from dataclasses import replace

from pinguard.commands.options import Options
from pinguard.copy.retarget import Destination, parse_destination, retarget
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock
from pinguard.lock.sync import sync_lock
from pinguard.policy.rules import tag_digest_mismatch
from pinguard.read.paths import Scan, ScannedFile, scan_for_writing
from pinguard.resolve.settings import OnlineSettings
from pinguard.sources.base import Found, SourceSettings
from pinguard.write.commit import commit, tree_roots
from pinguard.write.edits import unified_diff
from pinguard.write.journal import recover
from pinguard.write.plan import chart_writes, plan_pins, refuse_without_helm


def pin(paths: list[str], options: Options, sources: SourceSettings, *, resolve: OnlineSettings | None = None,
        mismatch: str = tag_digest_mismatch.REFUSE, dry_run: bool = False, allow_empty: bool = False,
        to: str | None = None, keep_registry: bool = True) -> int:
    """Pin from the lock; with `resolve` (`--resolve`), lock what it is missing first, reaching registries so."""
    if not dry_run:
        recover(tree_roots(paths), options.stderr)  # before reading: a killed run may have left the tree half-renamed
    result = scan_for_writing(paths, sources)
    refuse_without_helm(chart_writes(result, lockfile.read(options.lockfile)))  # before anything, the lock included
    if resolve is not None:  # online only when asked, and only for what the lock is missing
        locked = sync_lock(result, options.lockfile, resolve, mismatch=mismatch, paths=paths, allow_empty=allow_empty)
        for warning in locked.warnings:
            print(f"pinguard: warning: {warning}", file=options.stderr)
        if not options.quiet:
            options.stdout.writelines(locked.lines(options.lockfile))
    lock = lockfile.read(options.lockfile)
    if to is not None:
        destination = parse_destination(to, keep_registry=keep_registry)
        refuse_without_helm(_renamed_in_charts(result, lock, destination))
        renamed = retarget(result, lock, destination)
        for found, reason in renamed.refused:
            print(f"pinguard: {found.path}:{found.line}:{found.column}: {found.reference} not renamed: {reason}",
                  file=options.stderr)
        return _write(paths, renamed.changes, options, dry_run, failed=bool(renamed.refused))
    changes, missing, refused = plan_pins(result, lock)
    for found in missing:
        print(f"pinguard: {found.path}:{found.line}:{found.column}: {found.reference} is not in "
              f"{options.lockfile}; run `pinguard pin --resolve` or `pinguard lock`", file=options.stderr)
    for found, reason in refused:
        from pinguard.helm.pinning import POST_RENDER  # a refusal comes from a chart, which has loaded it

        print(f"pinguard: {found.path}:{found.line}:{found.column}: {found.rendered or found.reference} not pinned: "
              f"{reason}; {POST_RENDER}", file=options.stderr)
    return _write(paths, changes, options, dry_run, failed=bool(missing or refused))


def _renamed_in_charts(result: Scan, lock: Lock, destination: Destination) -> list[Found]:
    """The references of charts read without Helm that `--to` would rename."""
    return [found for scanned in result.files for found in scanned.found if found.pin_needs_helm
            and retarget(Scan([replace(scanned, found=[found])]), lock, destination).changes]


def _write(paths: list[str], changes: list[tuple[ScannedFile, str]], options: Options, dry_run: bool, *,
           failed: bool) -> int:
    """Commit the changes (or, dry, print them as a diff); 1 when something was left undone, or would change."""
    if dry_run:
        for scanned, text in changes:
            options.stdout.writelines(unified_diff(scanned.file, text))
        return 1 if changes or failed else 0
    commit([(scanned.file, text) for scanned, text in changes], tree_roots(paths))
    if not options.quiet and changes:
        print(f"pinned {len(changes)} file{'s' if len(changes) != 1 else ''}", file=options.stdout)
    return 1 if failed else 0

