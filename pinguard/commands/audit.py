"""`pinguard audit`: compare the images a cluster's pods run with the lockfile.

Reported: every container (init and ephemeral ones included) whose running digest (its
status's imageID) the lock does not hold for its image (its name and tag; any entry of
the name, or copied to it, when untagged: `pinguard.lock.locked`, as `check` judges a
reference), and every container whose image is not pinned to a digest;
apart from them, the sidecars
the policy allows (its `sidecars:` entries; the policy is `.pinguard.yaml` when there
is one, else the preset `default`, or those named). Also reported, cluster-wide, when
the API lets them be read: pinguard's admission bindings whose params ConfigMap does not
exist, and a missing keepalive binding (`pinguard.launch.bindings`); where it does not
(403), that is said once on stderr and the pods are audited all the same. Exit 1 when
anything but allowed sidecars is reported, 0 otherwise.
"""
from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from pinguard import untrusted_text
from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.commands.options import Options
from pinguard.launch import bindings
from pinguard.launch.pods import containers, judge
from pinguard.lock import lockfile
from pinguard.policy.model import Policy

if TYPE_CHECKING:
    from pinguard.launch.cluster import Kube


def _options(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--namespace", metavar="NS", help="the namespace (default: the context's)")
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    flags.policy(parser, _POLICY)
    flags.lockfile(parser)
    flags.quiet(parser)


def _run(context: Context) -> int:
    args = context.args
    return audit(context.options, context.policy(), namespace=args.namespace, all_namespaces=args.all_namespaces,
                 fmt=args.format)


_POLICY = PolicyDefault("default")
COMMAND = Command("audit", "report pods running images the lockfile does not hold", _options, _run, _POLICY)


def audit(options: Options, policy: Policy, *, namespace: str | None = None, all_namespaces: bool = False,
          fmt: str = "text") -> int:
    from pinguard.launch.cluster import connect  # the kubernetes client: loaded when a cluster is reached

    lock = lockfile.read(options.lockfile)
    kube = connect(options.env)
    pods = kube.pods(None if all_namespaces else namespace or kube.namespace)
    judged = [judge(pod, lock, policy.sidecars) for pod in pods]
    reports = [report for verdict in judged for report in verdict.problems]
    allowed = [report for verdict in judged for report in verdict.allowed]
    counted = sum(1 for pod in pods for _ in containers(pod))
    admission = _bindings(kube, options)
    problems = len(reports) + len(admission.problems)
    if fmt == "json":
        summary = {"pods": len(pods), "containers": counted, "reported": problems, "allowed": len(allowed)}
        json.dump({"containers": [r.to_json() for r in reports], "allowed": [r.to_json() for r in allowed],
                   "admission": {"bindings": admission.bindings, "problems": [p.to_json() for p in admission.problems]},
                   "summary": summary}, options.stdout, indent=2)
        options.stdout.write("\n")
    else:
        for report in [*reports, *admission.problems, *([] if options.quiet else allowed)]:
            print(report, file=options.stdout)
        if problems or not options.quiet:
            where = "all namespaces" if all_namespaces else f"namespace {namespace or kube.namespace}"
            besides = f", {_count(len(allowed), 'sidecar')} allowed by policy" if allowed else ""
            also = f" and {_count(admission.bindings, 'admission binding')}" if admission.bindings else ""
            print(f"{_count(problems, 'problem')}{besides}; checked {_count(counted, 'container')} in "
                  f"{_count(len(pods), 'pod')}{also} ({where})", file=options.stdout)
    return 1 if problems else 0


def _bindings(kube: Kube, options: Options) -> bindings.Checked:
    """pinguard's admission bindings judged; where the API does not let them be read, said once, and none."""
    from pinguard.launch.cluster import Refused

    try:
        return bindings.check(kube)
    except Refused as refused:
        if refused.status != 403:
            raise
        options.report.say(f"admission bindings not checked: {untrusted_text.shown(str(refused))}")
        return bindings.Checked(0, [])


def _count(number: int, word: str) -> str:
    return f"{number} {word}{'' if number == 1 else 's'}"
