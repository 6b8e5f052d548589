"""Scan and pin 5,000 real Kubernetes manifests: pinguard versus a bare libyaml parse of the same files.

The tree comes from `benchmarks/gen_manifests.py` (copies of real kuberay,
kubeflow, Kubernetes and AWS DLC manifests, 13 MB). Every command runs in a
fresh interpreter, so start-up and imports count the same for all; wall time is
taken around the child, peak memory is its maximum resident set as GNU
`/usr/bin/time` reports it. Run:
`.venv/bin/python benchmarks/scan_pin.py [--files N] [--repeat K]`.

`--big-file-mb M` measures one file instead: a generated Kubernetes `List` of
M MB with an `image:` every few lines, scanned against its bare parse. Scan's
cost per reference must not grow with the file, as it did when each reference
counted the line breaks before it.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from installed import compile_pinguard

from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for

GENERATOR = Path(__file__).resolve().parent / "gen_manifests.py"
SCAN_GOAL = 1.5  # scan's wall time over the bare parse
PIN_GOAL = 2.0  # pin's wall time over the bare parse
BIG_FILE_GOAL = 2.0  # scan's wall time over the bare parse of one large file
TIME = "/usr/bin/time"  # GNU time: %M is the peak RSS in KiB

# What any YAML tool must pay at least: read every file as text and compose every document with libyaml.
BASELINE = """
import os, sys, yaml
for root, _, names in os.walk(sys.argv[1]):
    for name in names:
        with open(os.path.join(root, name), encoding="utf-8") as f:
            for _ in yaml.compose_all(f.read(), Loader=yaml.CSafeLoader):
                pass
"""

# The same with the cyclic garbage collector paused, as pinguard's scan does: on one large file the collector,
# tracing a heap that only grows, costs more than the parse itself.
BASELINE_NO_GC = "import gc; gc.disable()" + BASELINE

# The floor under any tool that parses and then replaces files atomically, as pin does: the bare parse,
# then every file written to a temporary file beside it, one sync, and a rename over the original.
FLOOR = BASELINE + """
import tempfile
staged = []
for root, _, names in os.walk(sys.argv[1]):
    for name in names:
        path = os.path.join(root, name)
        with open(path, "rb") as f:
            data = f.read()
        fd, temporary = tempfile.mkstemp(dir=root, prefix="." + name + ".")
        os.write(fd, data)
        os.close(fd)
        staged.append((temporary, path))
os.sync()
for temporary, path in staged:
    os.replace(temporary, path)
"""


@dataclass
class Runs:
    walls: list[float]
    peaks_kib: list[int]

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def peak_mib(self) -> float:
        return max(self.peaks_kib) / 1024


def _measure(args: list[str], cwd: Path, runs: Runs) -> None:
    """Run one child under /usr/bin/time, its stdout to /dev/null; add its wall time and peak RSS to `runs`.

    Not RUSAGE_CHILDREN (the maximum over every child so far) nor os.wait4 on a child of
    this process: Linux carries the pre-exec high-water mark of the forked copy (this
    interpreter, pinguard imported) into the child's ru_maxrss. time's own copy is small.
    """
    # stderr goes to a file: a pipe left unread while waiting could fill and stall the child.
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as usage:
        started = time.perf_counter()
        code = subprocess.run([TIME, "-f", "%M", "-o", usage.name, *args], cwd=cwd, stdout=subprocess.DEVNULL,
                              stderr=err, check=False).returncode
        wall = time.perf_counter() - started
        if code != 0:  # a failing command would be timing the wrong work
            err.seek(0)
            raise SystemExit(f"{' '.join(args)} exited {code}:\n{err.read().decode()[-2000:]}")
        peak_kib = int(usage.read().split()[-1])
    runs.walls.append(wall)
    runs.peaks_kib.append(peak_kib)


def _changed(pristine: Path, pinned: Path) -> int:
    """Files whose bytes differ between the two trees."""
    count = 0
    for root, _, names in os.walk(pristine):
        for name in names:
            before = Path(root) / name
            after = pinned / before.relative_to(pristine)
            count += before.read_bytes() != after.read_bytes()
    return count


def _outside_git(folder: Path) -> None:
    # Inside a git work tree pinguard walks `git ls-files`, which would change what is measured.
    inside = subprocess.run(["git", "-C", str(folder), "rev-parse", "--is-inside-work-tree"],
                            capture_output=True, text=True, check=False)
    if inside.stdout.strip() == "true":
        raise SystemExit(f"{folder} is inside a git work tree; set TMPDIR to a folder outside one")


# One Pod of the big file: two containers, images from a few registries, plain and quoted.
POD = """\
- apiVersion: v1
  kind: Pod
  metadata:
    name: pod-{n}
    labels: {{app: app-{n}, tier: "{tier}"}}
  spec:
    containers:
    - name: main
      image: {registry}team/app-{app}:v1.{n}
      args: ["--port", "8080"]
    - name: sidecar
      image: "{registry}proxy/envoy:v1.{tier}"
"""
REGISTRIES = ("", "ghcr.io/", "quay.io/", "registry.example.com:5000/", "public.ecr.aws/")


def _big_manifest(size: int) -> tuple[str, int]:
    """A Kubernetes `List` of Pods of at least `size` characters, and how many images it holds."""
    parts = ["apiVersion: v1\nkind: List\nitems:\n"]
    written = len(parts[0])
    pods = 0
    while written < size:
        pod = POD.format(n=pods, tier=pods % 7, app=pods % 1000, registry=REGISTRIES[pods % len(REGISTRIES)])
        parts.append(pod)
        written += len(pod)
        pods += 1
    return "".join(parts), 2 * pods


def _tree(files: int, repeat: int) -> None:
    """Scan and pin the generated tree, each against the bare parse; prints the table."""
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as tmp:
        base = Path(tmp)
        _outside_git(base)
        pristine = base / "pristine" / "tree"
        generated = subprocess.run([python, str(GENERATOR), str(pristine), str(files)],
                                   check=True, capture_output=True, text=True).stdout.strip()
        size = sum(p.stat().st_size for p in pristine.rglob("*") if p.is_file())

        # Untimed: lock every reference the tree holds, with the test digests.
        scanned = scan_paths([str(pristine)])
        if scanned.errors:
            raise SystemExit("scan errors in the generated tree:\n" + "\n".join(scanned.errors[:10]))
        found = scanned.found
        pinnable = sum(item.reference is not None for item in found)
        lock = base / "pinguard.lock"
        lockfile.write(lock, lock_for(found))

        baseline, scans, pins, floors = Runs([], []), Runs([], []), Runs([], []), Runs([], [])
        rewritten: set[int] = set()
        # Rounds interleave the three commands, so drift on the machine touches each alike.
        for round_ in range(repeat):
            _measure([python, "-c", BASELINE, "tree"], pristine.parent, baseline)
            _measure([python, "-m", "pinguard", "scan", "--format", "json", "tree"], pristine.parent, scans)
            work = base / f"pin-{round_}" / "tree"
            shutil.copytree(pristine, work)  # pin rewrites the tree: each run starts from a fresh copy
            os.sync()  # so that pin's fsyncs do not also pay for flushing the copy
            _measure([python, "-m", "pinguard", "pin", "tree", "--lockfile", str(lock)], work.parent, pins)
            rewritten.add(_changed(pristine, work))
            shutil.rmtree(work.parent)
            shutil.copytree(pristine, work)
            os.sync()
            _measure([python, "-c", FLOOR, "tree"], work.parent, floors)
            shutil.rmtree(work.parent)

    print(f"{generated} ({size} bytes); {len(found)} references ({pinnable} pinnable)")
    print(f"median wall of {repeat} runs and max peak RSS, each run in a fresh interpreter")
    _header()
    for label, runs, note in (
        ("yaml.compose_all", baseline, "read and compose every file (CSafeLoader)"),
        ("pinguard scan", scans, f"{len(found)} references, JSON to /dev/null"),
        ("pinguard pin", pins, f"{'/'.join(map(str, sorted(rewritten)))} files rewritten"),
        ("parse + replace", floors, "the floor under pin: compose, then atomically replace every file"),
    ):
        _row(label, runs, baseline, note)
    scan_ratio, pin_ratio = scans.wall / baseline.wall, pins.wall / baseline.wall
    print(f"goals (wall): scan within {SCAN_GOAL}x of the bare parse: {scan_ratio:.2f}x, "
          f"{'met' if scan_ratio <= SCAN_GOAL else 'missed'}; "
          f"pin within {PIN_GOAL}x: {pin_ratio:.2f}x, {'met' if pin_ratio <= PIN_GOAL else 'missed'}")


def _big_file(megabytes: float, repeat: int) -> None:
    """Scan one large manifest against its bare parse; prints the table."""
    python = sys.executable
    text, images = _big_manifest(int(megabytes * 1_000_000))
    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as tmp:
        folder = Path(tmp) / "tree"
        folder.mkdir()
        _outside_git(folder)
        (folder / "pods.yaml").write_text(text, encoding="utf-8")
        baseline, paused, scans = Runs([], []), Runs([], []), Runs([], [])
        for _ in range(repeat):
            _measure([python, "-c", BASELINE, "tree"], folder.parent, baseline)
            _measure([python, "-c", BASELINE_NO_GC, "tree"], folder.parent, paused)
            _measure([python, "-m", "pinguard", "scan", "--format", "json", "tree"], folder.parent, scans)

    print(f"one Kubernetes List, {len(text) / 1e6:.1f} MB ({len(text)} bytes), {text.count(chr(10))} lines; "
          f"{images} references")
    print(f"median wall of {repeat} runs and max peak RSS, each run in a fresh interpreter")
    _header()
    _row("yaml.compose_all", baseline, baseline, "read and compose the file (CSafeLoader)")
    _row("same, gc paused", paused, baseline, "the bare parse with the cyclic collector off, as scan runs")
    _row("pinguard scan", scans, baseline, f"{images} references, JSON to /dev/null")
    ratio, strict = scans.wall / baseline.wall, scans.wall / paused.wall
    print(f"goal (wall): scan within {BIG_FILE_GOAL}x of the bare parse: {ratio:.2f}x, "
          f"{'met' if ratio <= BIG_FILE_GOAL else 'missed'}; of the parse with gc paused: {strict:.2f}x, "
          f"{'met' if strict <= BIG_FILE_GOAL else 'missed'}")


def _header() -> None:
    print(f"{'command':<17} {'wall s':>6} {'range s':>11} {'peak MiB':>8} {'wall x':>6} {'memory x':>8}")


def _row(label: str, runs: Runs, baseline: Runs, note: str) -> None:
    spread = f"{min(runs.walls):.2f}-{max(runs.walls):.2f}"
    print(f"{label:<17} {runs.wall:6.2f} {spread:>11} {runs.peak_mib:8.1f} {runs.wall / baseline.wall:6.2f} "
          f"{runs.peak_mib / baseline.peak_mib:8.2f}  {note}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=5000, help="manifests in the tree (default 5000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command (default 3)")
    parser.add_argument("--big-file-mb", type=float, metavar="M",
                        help="measure scan on one generated manifest of M MB instead of the tree")
    args = parser.parse_args()
    compile_pinguard()
    if not os.access(TIME, os.X_OK):
        raise SystemExit(f"{TIME} (GNU time) is needed to read each command's peak memory")
    if args.big_file_mb is not None:
        _big_file(args.big_file_mb, args.repeat)
    else:
        _tree(args.files, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
