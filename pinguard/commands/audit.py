"""`pinguard audit`: compare the images a cluster's pods run with the lockfile.

Reported: every container whose running digest (its status's imageID) the lock does
not hold for its image (its name and tag; any entry of the name when untagged), and
every container whose image is not pinned to a digest. Exit 1 when anything is
reported, 0 otherwise.
"""
from __future__ import annotations

import json

from pinguard import lockfile
from pinguard.launch.cluster import connect
from pinguard.launch.pods import containers, judge
from pinguard.options import Options


def audit(options: Options, *, namespace: str | None = None, all_namespaces: bool = False,
          fmt: str = "text") -> int:
    lock = lockfile.read(options.lockfile)
    kube = connect(options.env)
    pods = kube.pods(None if all_namespaces else namespace or kube.namespace)
    reports = [report for pod in pods for report in judge(pod, lock)]
    counted = sum(1 for pod in pods for _ in containers(pod))
    if fmt == "json":
        summary = {"pods": len(pods), "containers": counted, "reported": len(reports)}
        json.dump({"containers": [r.to_json() for r in reports], "summary": summary}, options.stdout, indent=2)
        options.stdout.write("\n")
    else:
        for report in reports:
            print(report, file=options.stdout)
        if reports or not options.quiet:
            where = "all namespaces" if all_namespaces else f"namespace {namespace or kube.namespace}"
            print(f"{_count(len(reports), 'problem')}; checked {_count(counted, 'container')} in "
                  f"{_count(len(pods), 'pod')} ({where})", file=options.stdout)
    return 1 if reports else 0


def _count(number: int, word: str) -> str:
    return f"{number} {word}{'' if number == 1 else 's'}"
