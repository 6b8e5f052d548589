"""`pinguard audit`: compare the images a cluster's pods run with the lockfile.

Reported: every container (init and ephemeral ones included) whose running digest (its
status's imageID) the lock does not hold for its image (its name and tag; any entry of
the name, or copied to it, when untagged: `pinguard.lock.locked`, as `check` judges a
reference), and every container whose image is not pinned to a digest;
apart from them, the sidecars
the policy allows (its `sidecars:` entries; the policy is `.pinguard.yaml` when there
is one, else the preset `default`, or those named). Exit 1 when anything but allowed
sidecars is reported, 0 otherwise.
"""
from __future__ import annotations

import json

from pinguard.commands.options import Options
from pinguard.launch.cluster import connect
from pinguard.launch.pods import containers, judge
from pinguard.lock import lockfile
from pinguard.policy.model import Policy


def audit(options: Options, policy: Policy, *, namespace: str | None = None, all_namespaces: bool = False,
          fmt: str = "text") -> int:
    lock = lockfile.read(options.lockfile)
    kube = connect(options.env)
    pods = kube.pods(None if all_namespaces else namespace or kube.namespace)
    judged = [judge(pod, lock, policy.sidecars) for pod in pods]
    reports = [report for verdict in judged for report in verdict.problems]
    allowed = [report for verdict in judged for report in verdict.allowed]
    counted = sum(1 for pod in pods for _ in containers(pod))
    if fmt == "json":
        summary = {"pods": len(pods), "containers": counted, "reported": len(reports), "allowed": len(allowed)}
        json.dump({"containers": [r.to_json() for r in reports], "allowed": [r.to_json() for r in allowed],
                   "summary": summary}, options.stdout, indent=2)
        options.stdout.write("\n")
    else:
        for report in [*reports, *([] if options.quiet else allowed)]:
            print(report, file=options.stdout)
        if reports or not options.quiet:
            where = "all namespaces" if all_namespaces else f"namespace {namespace or kube.namespace}"
            besides = f", {_count(len(allowed), 'sidecar')} allowed by policy" if allowed else ""
            print(f"{_count(len(reports), 'problem')}{besides}; checked {_count(counted, 'container')} in "
                  f"{_count(len(pods), 'pod')} ({where})", file=options.stdout)
    return 1 if reports else 0


def _count(number: int, word: str) -> str:
    return f"{number} {word}{'' if number == 1 else 's'}"
