"""`pinguard check [PATH...]`: the offline lint, reading only files and the lockfile.

Exit status: 0 clean (warnings allowed unless --strict), 1 findings, 2 when a
file, the lockfile or a policy cannot be read (every other file still checked).
`--output FILE` is written as `pinguard.write.atomic.write_output` writes it; `-` is stdout.
"""
from __future__ import annotations

import argparse
import io
from pathlib import Path

from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.commands.options import Options
from pinguard.findings import ERROR
from pinguard.policy.lint import lint
from pinguard.policy.model import Policy
from pinguard.report.formats import FORMATS
from pinguard.scan.paths import ScanSettings
from pinguard.write.atomic import write_output


def _options(parser: argparse.ArgumentParser) -> None:
    flags.paths(parser)
    flags.policy(parser, _POLICY)
    parser.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    flags.output(parser, "the report")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    flags.tools(parser)
    flags.lockfile(parser)
    flags.quiet(parser)


def _run(context: Context) -> int:
    args, policy = context.args, context.policy()
    return check(args.paths, context.options, policy, context.sources(policy), fmt=args.format, output=args.output,
                 strict=args.strict)


_POLICY = PolicyDefault("default")
COMMAND = Command("check", "offline lint: pinned, locked, consistent, allowed by policy", _options, _run, _POLICY)


def check(paths: list[str], options: Options, policy: Policy, scan: ScanSettings | None = None, *, fmt: str = "text",
          output: Path | None = None, strict: bool = False) -> int:
    result = lint(paths, policy, options.lockfile, scan=scan)
    options.report.say(*result.errors)
    if output is None:  # written as it is rendered: a report of many findings is never held whole
        FORMATS[fmt](result.findings, options.stdout)
    else:
        rendered = io.StringIO()
        FORMATS[fmt](result.findings, rendered)
        write_output(output, rendered.getvalue().encode("utf-8"), "the report")
    if result.errors:
        return 2
    failing = [f for f in result.findings if f.severity == ERROR or strict]
    return 1 if failing else 0

