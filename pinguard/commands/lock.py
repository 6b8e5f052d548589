"""`pinguard lock [PATH...] [--allow-empty]`: resolve every tagged reference found and record it in the lockfile.

New references are resolved, entries still referenced kept, the others dropped, but only
when every PATH holds some image reference (a path that holds none is taken for a wrong
one) unless `--allow-empty`; any failure leaves the old lockfile byte-identical (see
`pinguard.lock.sync`).
"""
from __future__ import annotations

from pinguard.lock.sync import sync_lock
from pinguard.options import Options
from pinguard.read.paths import scan_for_writing


def lock(paths: list[str], options: Options, *, allow_empty: bool = False) -> int:
    result = scan_for_writing(paths, options.stderr, options.sources)
    locked = None if result is None else sync_lock(result, options, paths, allow_empty=allow_empty)
    if locked is None:
        return 2
    if not options.quiet:
        options.stdout.writelines(locked.lines(options.lockfile))
    return 0
