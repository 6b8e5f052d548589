"""`pinguard pin [PATH...] [--resolve] [--dry-run] [--allow-empty] [--to REGISTRY[/PREFIX] [--no-keep-registry]]`:
rewrite references to `name:tag@digest`; with `--to`, to the name of the copy `pinguard copy` made there, digest
unchanged (never one name for two images: `copy.retarget`).

Offline: digests come from the lockfile only (`--resolve` locks what is missing
first, as `lock` does, `--allow-empty` included). Only the characters of each reference change; every file is written
atomically, and if any cannot be, none is. A run killed midway is finished or undone by the
next `pin` or `update` (see `pinguard.write.edits`). Without Helm, a chart's values are never written: a run that
would write one writes nothing, the lockfile included, and says to install helm (`pinguard.pin.plan`).
"""
from __future__ import annotations

import argparse
from dataclasses import replace

from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.commands.options import Options
from pinguard.commands.transaction import WriteTransaction
from pinguard.copy.retarget import Destination, parse_destination, retarget
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock
from pinguard.lock.settings import WrittenDigest
from pinguard.lock.sync import sync_lock
from pinguard.pin.plan import chart_writes, plan_pins, refuse_without_helm
from pinguard.resolve.settings import OnlineSettings
from pinguard.scan.paths import Scan, ScannedFile, ScanSettings, scan_for_writing
from pinguard.sources.base import Found


def _options(parser: argparse.ArgumentParser) -> None:
    flags.paths(parser)
    parser.add_argument("--resolve", action="store_true",
                        help="lock what the lockfile is missing first (online: the registry options apply)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print a diff instead; exit 1 if anything would change")
    parser.add_argument("--to", metavar="REGISTRY[/PREFIX]",
                        help="name every reference written whole as its copy there (`pinguard copy --to`), pinned to "
                             "the locked digest; one the lock records no copy of, or whose repository is written "
                             "apart from its tag, is reported")
    flags.keep_registry(parser)
    flags.allow_empty(parser)
    flags.policy(parser, _POLICY, online=True)
    flags.tools(parser)
    flags.lockfile(parser)
    flags.quiet(parser)
    flags.registry(parser)


def _run(context: Context) -> int:
    args = context.args
    if not args.resolve:
        context.offline()
        return pin(args.paths, context.options, context.sources(context.policy_at_hand()), dry_run=args.dry_run,
                   to=args.to, keep_registry=args.keep_registry)
    policy = context.policy()
    return pin(args.paths, context.options, context.sources(policy), resolve=context.online(policy),
               mismatch=policy.written_digest, dry_run=args.dry_run, allow_empty=args.allow_empty, to=args.to,
               keep_registry=args.keep_registry)


_POLICY = PolicyDefault(None)
COMMAND = Command("pin", "rewrite references to name:tag@digest from the lockfile", _options, _run, _POLICY)


def pin(paths: list[str], options: Options, sources: ScanSettings, *, resolve: OnlineSettings | None = None,
        mismatch: WrittenDigest = WrittenDigest.REFUSE, dry_run: bool = False, allow_empty: bool = False,
        to: str | None = None, keep_registry: bool = True) -> int:
    """Pin from the lock; with `resolve` (`--resolve`), lock what it is missing first, reaching registries so."""
    # Begun before reading: a killed run may have left the tree half-renamed.
    writes = WriteTransaction.begin(paths, options, dry_run=dry_run)
    result = scan_for_writing(paths, sources)
    refuse_without_helm(chart_writes(result, lockfile.read(options.lockfile)))  # before anything, the lock included
    if resolve is not None:  # online only when asked, and only for what the lock is missing
        locked = sync_lock(result, options.lockfile, resolve, mismatch=mismatch, paths=paths, allow_empty=allow_empty)
        options.report.warning(*locked.warnings)
        if not options.quiet:
            options.stdout.writelines(locked.lines(options.lockfile))
    lock = lockfile.read(options.lockfile)
    if to is not None:
        destination = parse_destination(to, keep_registry=keep_registry)
        refuse_without_helm(_renamed_in_charts(result, lock, destination))
        renamed = retarget(result, lock, destination)
        options.report.say(*(f"{found.path}:{found.line}:{found.column}: {found.reference} not renamed: {reason}"
                             for found, reason in renamed.refused))
        return _write(writes, renamed.changes, failed=bool(renamed.refused))
    changes, missing, refused, missing_actions = plan_pins(result, lock)
    unlocked = [*((f"{found.path}:{found.line}:{found.column}", found.reference) for found in missing),
                *((f"{use.path}:{use.line}:{use.column}", use.value) for use in missing_actions)]
    options.report.say(*(f"{where}: {spelled} is not in {options.lockfile}; run `pinguard pin --resolve` or "
                         "`pinguard lock`" for where, spelled in unlocked))
    if refused:
        from pinguard.helm.pinning import POST_RENDER  # a refusal comes from a chart, which has loaded it

        options.report.say(*(f"{found.path}:{found.line}:{found.column}: {found.rendered or found.reference} not "
                             f"pinned: {reason}; {POST_RENDER}" for found, reason in refused))
    return _write(writes, changes, failed=bool(missing or refused or missing_actions))


def _renamed_in_charts(result: Scan, lock: Lock, destination: Destination) -> list[Found]:
    """The references of charts read without Helm that `--to` would rename."""
    return [found for scanned in result.files for found in scanned.found if found.pin_needs_helm
            and retarget(Scan([replace(scanned, found=[found])]), lock, destination).changes]


def _write(writes: WriteTransaction, changes: list[tuple[ScannedFile, str]], *, failed: bool) -> int:
    """Commit the changes (or, dry, print them as a diff); 1 when something was left undone, or would change."""
    writes.commit([(scanned.file, text) for scanned, text in changes])
    if writes.dry_run:
        return 1 if changes or failed else 0
    if not writes.options.quiet and changes:
        print(f"pinned {len(changes)} file{'s' if len(changes) != 1 else ''}", file=writes.options.stdout)
    return 1 if failed else 0

