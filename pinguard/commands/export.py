"""`pinguard export admission`: the lock as an admission policy the cluster enforces.

`--format vap` (default) writes the params ConfigMaps, the ValidatingAdmissionPolicies
and their bindings; `--format kyverno` a Kyverno ClusterPolicy. `--namespace`
(repeatable) binds those namespaces, else every namespace but kube-system; `--mode` is
deny, warn or audit; `--kind GROUP/VERSION/KIND[/PLURAL]:PATH[,PATH...]` (repeatable)
judges a custom resource too, at the paths to its pod specs (`pinguard.admission.workloads`).
`--output FILE` is written as `pinguard.write.atomic.write_output` writes it (as `check
--output` is), else the YAML goes to stdout.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from pinguard.admission.export import FORMATS, read_source, render
from pinguard.admission.objects import MODES, namespaces
from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.options import Options
from pinguard.errors import PinguardError
from pinguard.write.atomic import write_output


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", choices=("admission",), help="`admission`: only images pinned to a locked digest "
                                                             "are admitted")
    parser.add_argument("--format", choices=("vap", "kyverno"), default="vap",
                        help="vap: ValidatingAdmissionPolicies, their bindings and params ConfigMaps (default); "
                             "kyverno: a Kyverno ClusterPolicy")
    parser.add_argument("--namespace", action="append", default=[], dest="namespaces", metavar="NS",
                        help="bind this namespace (repeatable; default: every namespace but kube-system)")
    parser.add_argument("--mode", choices=("deny", "warn", "audit"), default="deny",
                        help="what a pod with an unlocked image meets: denied (default), admitted with a warning, "
                             "or admitted and audited")
    parser.add_argument("--kind", action="append", default=[], dest="kinds",
                        metavar="GROUP/VERSION/KIND[/PLURAL]:PATH[,PATH...]",
                        help="judge a custom resource too, at the paths to its pod specs (repeatable), e.g. "
                             "'example.com/v1/TrainRun:spec.template.spec'")
    flags.output(parser, "the YAML")
    flags.lockfile(parser)
    flags.quiet(parser)


def _run(context: Context) -> int:
    args = context.args
    return export(context.options, fmt=args.format, bound=args.namespaces, mode=args.mode, output=args.output,
                  kinds=args.kinds)


COMMAND = Command("export", "write the lock as an admission policy the cluster enforces", _options, _run)


def export(options: Options, *, fmt: str = "vap", bound: Sequence[str] = (), mode: str = "deny",
           output: Path | None = None, kinds: Sequence[str] = ()) -> int:
    if fmt not in FORMATS or mode not in MODES:
        raise PinguardError(f"--format must be one of {', '.join(FORMATS)} and --mode one of {', '.join(MODES)}")
    text = render(read_source(options.lockfile), fmt, namespaces(bound), mode, kinds)
    if output is None:
        options.stdout.write(text)
        return 0
    write_output(output, text.encode("utf-8"), "the admission policy")
    if not options.quiet:
        print(f"wrote {output}", file=options.stderr)
    return 0
