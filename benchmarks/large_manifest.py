"""`scan`, `check` and `pin` on one large manifest of many `---` documents: time and memory at 5 and 50 MB.

The file is Pods, one a document, each with one unpinned image out of 40 (the lock holds them all), so
`check` reports each reference and `pin` rewrites each. Every command runs in a fresh interpreter, after
the same command on a one-Pod file in that interpreter, so that every module it imports is imported: its
memory is the peak resident set (VmHWM) less the resident set then (VmRSS), over the file's size; its time
is the command's own, start-up left out. Goals: memory under 10x the file at every size, and the larger
file's time within 1.3x of the smaller one's scaled by size.
Run: `.venv/bin/python benchmarks/large_manifest.py [--sizes 5 50] [--repeat 1]`.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from installed import compile_pinguard

from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for

ROOT = Path(__file__).resolve().parent.parent

MEMORY_GOAL = 10.0  # the command's peak over its baseline, over the file's size
TIME_GOAL = 1.3  # the larger file's time over the smaller one's scaled by size
COMMANDS = ("scan", "check", "pin")
POD = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: pod-{n}
  labels: {{app: app-{n}, tier: "{tier}"}}
spec:
  containers:
  - name: main
    image: {registry}team/app-{app}:v1.{tier}
    args: ["--port", "8080"]
"""
REGISTRIES = ("", "ghcr.io/", "quay.io/", "registry.example.com:5000/", "public.ecr.aws/")

# Run in the child: the command once on the small file, then measured on the large one.
DRIVER = """
import json, os, sys, time
from pinguard.cli import main

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))

command, warm, path, lock = sys.argv[1:5]
def args(name):
    return [command, name] + ([] if command == "scan" else ["--lockfile", lock])
with open(os.devnull, "w") as null:
    main(args(warm), stdout=null, stderr=null)
    base = status("VmRSS")
    started = time.perf_counter()
    code = main(args(path), stdout=null)
    wall = time.perf_counter() - started
print(json.dumps({"code": code, "wall": wall, "base": base, "peak": status("VmHWM")}))
"""


def _manifest(size: int) -> tuple[str, int]:
    """Pod documents until `size` characters, and how many."""
    parts, written, pods = [], 0, 0
    while written < size:
        app = pods % 40
        part = POD.format(n=pods, tier=app % 7, app=app, registry=REGISTRIES[app % len(REGISTRIES)])
        parts.append(part)
        written += len(part)
        pods += 1
    return "".join(parts), pods


def _run(command: str, folder: Path, name: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.run([sys.executable, "-c", DRIVER, command, "warm.yaml", name, "pinguard.lock"], cwd=folder,
                           env=env, capture_output=True, text=True, check=False)
    if child.returncode != 0:
        raise SystemExit(f"pinguard {command} {name} failed:\n{child.stderr[-2000:]}")
    measured: dict[str, float] = json.loads(child.stdout.splitlines()[-1])
    if measured["code"] not in (0, 1):  # 1: check's findings, the work being measured
        raise SystemExit(f"pinguard {command} {name} exited {measured['code']}:\n{child.stderr[-2000:]}")
    return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=float, nargs="+", default=[5, 50], help="file sizes in MB (default 5 50)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command at each size (default 1)")
    args = parser.parse_args()
    compile_pinguard()
    rows: dict[tuple[str, float], tuple[float, float, float, float]] = {}  # wall s, base MiB, over MiB, x file
    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as tmp:
        folder = Path(tmp)
        warm, _ = _manifest(1)
        for megabytes in args.sizes:
            text, pods = _manifest(int(megabytes * 1_000_000))
            (folder / "pristine.yaml").write_text(text)
            if megabytes == args.sizes[0]:  # every image of the file locked: the lock is the same at every size
                lockfile.write(folder / "pinguard.lock", lock_for(scan_paths([str(folder / "pristine.yaml")]).found))
            size = len(text.encode())
            print(f"{megabytes:g} MB: {pods} Pod documents, {size} bytes, {pods} references", flush=True)
            for command in COMMANDS:
                runs = []
                for _ in range(args.repeat):
                    shutil.copy(folder / "pristine.yaml", folder / "pods.yaml")  # pin rewrites both
                    (folder / "warm.yaml").write_text(warm)
                    runs.append(_run(command, folder, "pods.yaml"))
                over = max(run["peak"] - run["base"] for run in runs)
                rows[command, megabytes] = (statistics.median(run["wall"] for run in runs),
                                            min(run["base"] for run in runs) / 2**20, over / 2**20, over / size)
    _report(rows, args.sizes)
    return 0


def _report(rows: dict[tuple[str, float], tuple[float, float, float, float]], sizes: list[float]) -> None:
    print(f"{'command':<8} {'MB':>5} {'wall s':>7} {'base MiB':>8} {'peak-base MiB':>13} {'x file':>6}")
    for megabytes in sizes:
        for command in COMMANDS:
            wall, base, over, ratio = rows[command, megabytes]
            print(f"{command:<8} {megabytes:5g} {wall:7.2f} {base:8.1f} {over:13.1f} {ratio:6.2f}")
    print("goals:")
    for command in COMMANDS:
        worst = max(rows[command, megabytes][3] for megabytes in sizes)
        print(f"  {command}: memory under {MEMORY_GOAL:g}x the file at every size: {worst:.2f}x, "
              f"{'met' if worst < MEMORY_GOAL else 'missed'}")
        small, large = min(sizes), max(sizes)
        if small != large:
            linear = rows[command, large][0] / (rows[command, small][0] * large / small)
            print(f"  {command}: {large:g} MB within {TIME_GOAL}x of {large / small:g} times {small:g} MB's time: "
                  f"{linear:.2f}x, {'met' if linear <= TIME_GOAL else 'missed'}")


if __name__ == "__main__":
    raise SystemExit(main())
