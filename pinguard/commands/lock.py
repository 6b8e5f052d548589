"""`pinguard lock [PATH...] [--allow-empty]`: resolve every tagged reference found and record it in the lockfile.

New references are resolved, entries still referenced kept, the others dropped, but only
when every PATH holds some image reference (a path that holds none is taken for a wrong
one) unless `--allow-empty`; any failure leaves the old lockfile byte-identical (see
`pinguard.lock.sync`).
"""
from __future__ import annotations

from pinguard.commands.options import Options
from pinguard.lock.sync import sync_lock
from pinguard.read.paths import scan_for_writing
from pinguard.resolve.settings import OnlineSettings
from pinguard.sources.base import SourceSettings


def lock(paths: list[str], options: Options, sources: SourceSettings, online: OnlineSettings, *, mismatch: str,
         allow_empty: bool = False) -> int:
    result = scan_for_writing(paths, sources)
    locked = sync_lock(result, options.lockfile, online, mismatch=mismatch, paths=paths, allow_empty=allow_empty)
    for warning in locked.warnings:
        print(f"pinguard: warning: {warning}", file=options.stderr)
    if not options.quiet:
        options.stdout.writelines(locked.lines(options.lockfile))
    return 0
