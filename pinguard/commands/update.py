"""`pinguard update [PATH...] [--dry-run] [--format text|markdown]`: move moved tags forward, and say why.

The plan (`pinguard.pin.update`) says which moving tags (and GitHub Actions refs) moved and
what each rebuild changed; it is printed, then the lock entries and every pinned reference to
those name:tags (every `uses:` pinned to the old commit) are replaced in one all-or-nothing
step (`--dry-run`: a diff instead).
References without a digest are left to `pin`. Without Helm, a moved pin in a chart's values refuses the
whole update, as `pin` refuses (`pinguard.pin.plan`): nothing is written, the lockfile included.
"""
from __future__ import annotations

import argparse

from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.commands.options import Options
from pinguard.commands.transaction import WriteTransaction
from pinguard.pin import explain
from pinguard.pin.update import plan_update
from pinguard.resolve.settings import OnlineSettings
from pinguard.scan.paths import ScanSettings, scan_for_writing


def _options(parser: argparse.ArgumentParser) -> None:
    flags.paths(parser)
    parser.add_argument("--dry-run", action="store_true",
                        help="print the explanation and a diff instead; exit 1 if anything would change")
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    flags.policy(parser, _POLICY)
    flags.tools(parser)
    flags.lockfile(parser)
    flags.quiet(parser)
    flags.registry(parser)


def _run(context: Context) -> int:
    args, policy = context.args, context.policy_at_hand()
    return update(args.paths, context.options, context.sources(policy), context.online(policy),
                  dry_run=args.dry_run, fmt=args.format)


_POLICY = PolicyDefault(None)
COMMAND = Command("update", "move moved tags forward: explain, update the lock, re-pin", _options, _run, _POLICY)


def update(paths: list[str], options: Options, sources: ScanSettings, online: OnlineSettings, *,
           dry_run: bool = False, fmt: str = "text") -> int:
    # Begun before reading: a killed run may have left the tree half-renamed.
    writes = WriteTransaction.begin(paths, options, dry_run=dry_run)
    result = scan_for_writing(paths, sources)
    with writes.exclusive():  # from the plan to the commit: no other writer
        plan = plan_update(result, options.lockfile, online)
        options.report.warning(*plan.corrected)
        explained = explain.markdown if fmt == "markdown" else explain.text
        options.stdout.write(explained(plan.rebuilds, plan.moves))
        if not plan.moved and fmt == "text" and not options.quiet:
            print("nothing to update: no moving tag has moved", file=options.stdout)
        writes.commit(plan.changes, fenced=fmt == "markdown")
    if dry_run:
        return 1 if plan.changes else 0
    if plan.moved and fmt == "text" and not options.quiet:
        tags, files = plan.moved, plan.repinned
        print(f"updated {tags} tag{'s' if tags != 1 else ''} in {options.lockfile}, "
              f"re-pinned {files} file{'s' if files != 1 else ''}", file=options.stdout)
    return 0
