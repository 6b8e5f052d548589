"""`pinguard check [PATH...]`: the offline lint, reading only files and the lockfile.

Exit status: 0 clean (warnings allowed unless --strict), 1 findings, 2 when a
file, the lockfile or a policy cannot be read (every other file still checked).
"""
from __future__ import annotations

import io
import os
import stat
from pathlib import Path

from pinguard.atomic import write_bytes
from pinguard.errors import PinguardError
from pinguard.findings import ERROR
from pinguard.options import Options
from pinguard.policy import for_command
from pinguard.policy.run import lint
from pinguard.report import FORMATS


def check(paths: list[str], options: Options, *, policies: list[Path], fmt: str = "text",
          output: Path | None = None, strict: bool = False) -> int:
    result = lint(paths, for_command(policies), options.lockfile)
    for error in result.errors:
        print(f"pinguard: {error}", file=options.stderr)
    rendered = io.StringIO()
    FORMATS[fmt](result.findings, rendered)
    if output is not None and str(output) != "-":
        _write_report(output, rendered.getvalue().encode("utf-8"))
    else:
        options.stdout.write(rendered.getvalue())
    if result.errors:
        return 2
    failing = [f for f in result.findings if f.severity == ERROR or strict]
    return 1 if failing else 0


def _write_report(output: Path, data: bytes) -> None:
    """Write the report to `--output` (`-` is stdout, handled by the caller).

    A regular file, or a new name, is replaced in one rename, so a reader sees the old
    report or the new one; through a symlink that is the file it leads to, and the link
    stays a link. Anything else (a FIFO, `/dev/null`, `/dev/stdout` on a terminal or a
    pipe) is opened and written, as the shell's `>` does: a rename would replace the node
    and the report would reach no one. A folder is refused.
    """
    try:
        try:
            status: os.stat_result | None = os.stat(output)
        except FileNotFoundError:
            status = None  # a new file, or a dangling symlink: created where the link leads
        if status is not None and stat.S_ISDIR(status.st_mode):
            raise PinguardError(f"{output}: is a folder; --output takes a file name")
        real = Path(os.path.realpath(output))  # through /proc (`/dev/stdout`) it may name a file no longer there
        if status is None or (stat.S_ISREG(status.st_mode) and real.exists() and os.path.samefile(real, output)):
            write_bytes(real, data)
        else:
            with open(output, "wb") as handle:
                handle.write(data)
    except OSError as exc:
        raise PinguardError(f"{output}: cannot write the report: {exc.strerror}") from None
