"""`pinguard scan [PATH...]`: every image reference, with its exact place."""
from __future__ import annotations

import argparse
import json

from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.commands.options import Options
from pinguard.scan.paths import ScanSettings, collector_paused, each_file
from pinguard.sources.base import Found
from pinguard.untrusted_text import shown


def _options(parser: argparse.ArgumentParser) -> None:
    flags.paths(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    flags.policy(parser, _POLICY)
    flags.tools(parser)
    flags.quiet(parser)


def _run(context: Context) -> int:
    args = context.args
    return scan(args.paths, context.options, context.sources(context.policy_at_hand()), fmt=args.format)


_POLICY = PolicyDefault(None)
COMMAND = Command("scan", "list every image reference with its place in the file", _options, _run, _POLICY)


def scan(paths: list[str], options: Options, sources: ScanSettings, *, fmt: str = "text") -> int:
    errors: list[str] = []
    with collector_paused():  # one file at a time: only the references are kept, not every file's text
        found = [item for scanned in each_file(paths, errors, sources) for item in scanned.found]
    options.report.say(*errors)
    if fmt == "json":  # one reference a line: readable, diffable, and quick to write for thousands
        lines = ",\n".join("    " + json.dumps(_json(item), ensure_ascii=False) for item in found)
        options.stdout.write('{\n  "references": [\n' + lines + ("\n" if lines else "") + "  ]\n}\n")
    else:
        for item in found:
            options.stdout.write(_text(item) + "\n")
    return 2 if errors else 0


def _json(item: Found) -> dict[str, object]:
    reference = item.reference
    return {
        "file": item.path,
        "line": item.line,
        "column": item.column,
        "source": item.source,
        "value": item.value,
        "name": reference.name if reference else None,
        "tag": reference.tag if reference else None,
        "digest": reference.digest if reference else None,
        "problem": item.problem,
    }


def _text(item: Found) -> str:
    where = f"{item.path}:{item.line}:{item.column}"
    if item.reference is None:
        return f"{where}: {shown(item.value)} ({item.source}): not resolvable: {shown(item.problem or '')}"
    return f"{where}: {item.reference} ({item.source})"
