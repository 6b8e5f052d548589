"""`pinguard check [PATH...]`: the offline lint, reading only files and the lockfile.

Exit status: 0 clean (warnings allowed unless --strict), 1 findings, 2 when a
file, the lockfile or a policy cannot be read (every other file still checked).
`--output FILE` is written as `pinguard.write.atomic.write_output` writes it; `-` is stdout.
"""
from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from pinguard.findings import ERROR
from pinguard.options import Options
from pinguard.policy import for_command
from pinguard.policy.run import lint
from pinguard.report import FORMATS
from pinguard.write.atomic import write_output


def check(paths: list[str], options: Options, *, policies: list[Path], fmt: str = "text",
          output: Path | None = None, strict: bool = False) -> int:
    policy = for_command(policies)
    result = lint(paths, replace(policy, sources=options.sources_over(policy.sources)), options.lockfile)
    for error in result.errors:
        print(f"pinguard: {error}", file=options.stderr)
    rendered = io.StringIO()
    FORMATS[fmt](result.findings, rendered)
    if output is None:
        options.stdout.write(rendered.getvalue())
    else:
        write_output(output, rendered.getvalue().encode("utf-8"), "the report")
    if result.errors:
        return 2
    failing = [f for f in result.findings if f.severity == ERROR or strict]
    return 1 if failing else 0

