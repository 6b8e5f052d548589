"""`pinguard lock [PATH...] [--allow-empty]`: resolve every tagged reference found and record it in the lockfile.

New references are resolved, entries still referenced kept, the others dropped, but only
when every PATH holds some image reference (a path that holds none is taken for a wrong
one) unless `--allow-empty`; any failure leaves the old lockfile byte-identical (see
`pinguard.lock.sync`).
"""
from __future__ import annotations

import argparse

from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.commands.options import Options
from pinguard.lock.settings import WrittenDigest
from pinguard.lock.sync import sync_lock
from pinguard.resolve.settings import OnlineSettings
from pinguard.scan.paths import ScanSettings, scan_for_writing


def _options(parser: argparse.ArgumentParser) -> None:
    flags.paths(parser)
    flags.allow_empty(parser)
    flags.provenance(parser)
    flags.policy(parser, _POLICY)
    flags.tools(parser)
    flags.lockfile(parser)
    flags.quiet(parser)
    flags.registry(parser)


def _run(context: Context) -> int:
    args, policy = context.args, context.policy()
    online = context.online(policy, provenance=args.provenance or policy.lock_provenance)
    return lock(args.paths, context.options, context.sources(policy), online, mismatch=policy.written_digest,
                allow_empty=args.allow_empty)


_POLICY = PolicyDefault("default")
COMMAND = Command("lock", "resolve what the files reference and write the lockfile", _options, _run, _POLICY)


def lock(paths: list[str], options: Options, sources: ScanSettings, online: OnlineSettings, *,
         mismatch: WrittenDigest,
         allow_empty: bool = False) -> int:
    result = scan_for_writing(paths, sources)
    locked = sync_lock(result, options.lockfile, online, mismatch=mismatch, paths=paths, allow_empty=allow_empty)
    options.report.warning(*locked.warnings)
    if not options.quiet:
        options.stdout.writelines(locked.lines(options.lockfile))
    return 0
