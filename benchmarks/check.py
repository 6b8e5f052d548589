"""Check one manifest and 5,000: pinguard check versus the bare interpreter, a bare libyaml parse and checkov.

Two cases, each command in a fresh interpreter under GNU `/usr/bin/time` (wall
time taken around the child, peak memory its maximum resident set):

- one file, the pre-commit case: `pinguard check pod.yaml` on one small pinned
  manifest with its `pinguard.lock`, versus `python -c "import yaml"`;
- a tree from `benchmarks/gen_manifests.py`: `pinguard check` on it pinned
  (the usual state), unpinned (every reference a finding) and pinned under the
  `aws-dlc` preset, versus the bare parse of `scan_pin.py` and checkov's
  image-digest check CKV_K8S_43.

checkov is not a project dependency; give its path with `--checkov` (default:
`checkov` on PATH, else its rows are skipped). It is run once per tree size, and
killed if the machine's available memory falls below `--min-free-mib`.
Run: `.venv/bin/python benchmarks/check.py [--files N] [--repeat K] [--checkov PATH] [--checkov-files N ...]`.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# scan_pin puts the repository root on sys.path, so pinguard and testing import after it.
from installed import PINGUARD, compile_pinguard
from scan_pin import BASELINE, GENERATOR, TIME, Runs, _outside_git

from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for

ONE_FILE_GOAL = 4.0  # check of one file over the interpreter importing yaml
TREE_GOAL = 1.5  # check of the pinned tree over the bare parse
CHECKOV_GOAL = 50.0  # checkov's wall time over pinguard check's, at least
MEMORY_GOAL_MIB = 300  # "a few hundred MB" for the tree

# The pre-commit case: a hook gets the changed files, usually one small manifest.
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
    - name: web
      image: nginx:1.27.0
      ports:
        - containerPort: 80
"""

# checkov otherwise asks the network for its guideline texts and a newer version; both tools run offline here.
CHECKOV_ENV = {"BC_SKIP_MAPPING": "TRUE", "CKV_SKIP_PACKAGE_UPDATE_CHECK": "TRUE"}


@dataclass
class Row:
    label: str
    runs: Runs = field(default_factory=lambda: Runs([], []))
    drops_kib: list[int] = field(default_factory=list)  # fall in the machine's available memory, per run
    killed: bool = False
    note: str = ""


def _available_kib() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    raise SystemExit("no MemAvailable in /proc/meminfo")


def _measure(args: list[str], cwd: Path, row: Row, *, env: dict[str, str] | None = None,
             min_free_kib: int = 0) -> None:
    """Run one child under /usr/bin/time, its stdout to /dev/null; add its wall time and peak RSS to `row`.

    Like scan_pin's, but `check` exits 1 when it reports findings, which is still the work to time; and a
    thread watches the machine's available memory, which also counts a forking child's workers (%M is the
    largest single process), and kills the child when less than `min_free_kib` is left.
    """
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as usage:
        before = _available_kib()
        lowest = [before]
        done = threading.Event()
        # Wall time from perf_counter, not time's %e: its 10 ms steps are a third of the one-file baseline.
        started = time.perf_counter()
        child = subprocess.Popen([TIME, "-f", "%M", "-o", usage.name, *args], cwd=cwd, stdout=subprocess.DEVNULL,
                                 stderr=err, env={**os.environ, **(env or {})}, process_group=0)

        def watch() -> None:
            while not done.wait(0.2):
                lowest[0] = min(lowest[0], _available_kib())
                if lowest[0] < min_free_kib:
                    row.killed = True
                    try:
                        os.killpg(child.pid, 9)  # its own group: time, the child, its workers
                    except ProcessLookupError:
                        pass  # it ended in between
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        code = child.wait()
        wall = time.perf_counter() - started
        done.set()
        watcher.join()
        if row.killed:
            return
        if code not in (0, 1):  # 1: findings reported; anything else would be timing the wrong work
            err.seek(0)
            raise SystemExit(f"{' '.join(args)} exited {code}:\n{err.read().decode()[-2000:]}")
        peak_kib = int(usage.read().split()[-1])
    row.runs.walls.append(wall)
    row.runs.peaks_kib.append(peak_kib)
    row.drops_kib.append(before - lowest[0])


def _summary(args: list[str], cwd: Path) -> str:
    """The last line a pinguard command prints (its count of findings), from an untimed run."""
    out = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} exited {out.returncode}:\n{out.stderr[-2000:]}")
    lines = out.stdout.strip().splitlines()
    return f"exit {out.returncode}, {lines[-1] if lines else 'no output'}"


def _lock_and_pin(folder: Path, lock: Path) -> int:
    """Untimed: lock every reference under `folder` with the test digests and pin a copy beside it."""
    scanned = scan_paths([str(folder)])
    if scanned.errors:
        raise SystemExit("scan errors in the generated files:\n" + "\n".join(scanned.errors[:10]))
    lockfile.write(lock, lock_for(scanned.found))
    pinned = folder.parent / "pinned"
    shutil.copytree(folder, pinned)
    subprocess.run([*PINGUARD, "pin", pinned.name, "--lockfile", str(lock)],
                   cwd=folder.parent, check=True, capture_output=True)
    return len(scanned.found)


def _table(rows: list[Row], base: Row, unit: str, scale: float, digits: int) -> None:
    print(f"{'command':<26} {'wall ' + unit:>7} {'range ' + unit:>11} {'peak MiB':>8} {'wall x':>7} {'memory x':>8}")
    for row in rows:
        if row.killed or not row.runs.walls:
            print(f"{row.label:<26} {'-':>7} {'-':>11} {'-':>8} {'-':>7} {'-':>8}  {row.note}")
            continue
        walls = row.runs.walls
        spread = f"{min(walls) * scale:.{digits}f}-{max(walls) * scale:.{digits}f}"
        print(f"{row.label:<26} {row.runs.wall * scale:7.{digits}f} {spread:>11} {row.runs.peak_mib:8.1f} "
              f"{row.runs.wall / base.runs.wall:7.2f} {row.runs.peak_mib / base.runs.peak_mib:8.2f}  {row.note}")


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def one_file(base: Path, repeat: int) -> str:
    folder = base / "one"
    folder.mkdir()
    source = folder / "source"
    source.mkdir()
    (source / "pod.yaml").write_text(POD, encoding="utf-8")
    _lock_and_pin(source, folder / "pinguard.lock")  # pinguard.lock in the folder the hook runs in
    check = [*PINGUARD, "check", "pinned/pod.yaml"]
    summary = _summary(check, folder)
    bare = Row('python -c "import yaml"', note="the interpreter and PyYAML, nothing else")
    empty = Row("python -c pass", note="the interpreter alone")
    checks = Row("pinguard check pod.yaml", note=summary)
    for _ in range(repeat):  # interleaved, so drift on the machine touches each alike
        _measure([sys.executable, "-c", "import yaml"], folder, bare)
        _measure([sys.executable, "-c", "pass"], folder, empty)
        _measure(check, folder, checks)
    size = len((folder / "pinned" / "pod.yaml").read_bytes())
    print(f"one pinned manifest ({size} bytes, one reference) and its pinguard.lock; "
          f"median wall of {repeat} runs and max peak RSS, each run in a fresh interpreter")
    _table([bare, empty, checks], bare, "ms", 1000, 1)
    ratio = checks.runs.wall / bare.runs.wall
    return f"one file within {ONE_FILE_GOAL:g}x of importing yaml: {ratio:.2f}x, {_met(ratio <= ONE_FILE_GOAL)}"


def tree(base: Path, files: int, repeat: int, checkov: str | None, with_checkov: bool,
         min_free_kib: int) -> list[str]:
    """Measure one tree size, checkov once when `with_checkov`. Returns the goal lines."""
    folder = base / f"tree-{files}"
    folder.mkdir()
    source = folder / "unpinned"
    generated = subprocess.run([sys.executable, str(GENERATOR), str(source), str(files)],
                               check=True, capture_output=True, text=True).stdout.strip()
    references = _lock_and_pin(source, folder / "pinguard.lock")
    pinned_check = [*PINGUARD, "check", "pinned"]
    unpinned_check = [*PINGUARD, "check", "unpinned"]
    # The shipped preset whose document rules (Ray on DLC) look at whole documents, not only the references.
    dlc_check = [*PINGUARD, "check", "--policy", "aws-dlc", "pinned"]
    bare = Row("yaml.compose_all", note="read and compose every file (CSafeLoader)")
    pinned = Row("pinguard check, pinned", note=_summary(pinned_check, folder))
    unpinned = Row("pinguard check, unpinned", note=_summary(unpinned_check, folder))
    dlc = Row("check --policy aws-dlc", note="pinned; " + _summary(dlc_check, folder))
    for _ in range(repeat):
        _measure([sys.executable, "-c", BASELINE, "pinned"], folder, bare)
        _measure(pinned_check, folder, pinned)
        _measure(unpinned_check, folder, unpinned)
        _measure(dlc_check, folder, dlc)
    rows = [bare, pinned, unpinned, dlc]
    checkov_row = None
    if checkov is None and with_checkov:
        rows.append(Row("checkov CKV_K8S_43", note="skipped: no checkov on PATH and no --checkov given"))
    elif checkov is not None and with_checkov:
        # Once: on 5,000 files it takes minutes and gigabytes. On the pinned tree, where CKV_K8S_43 passes.
        checkov_row = Row("checkov CKV_K8S_43, pinned")
        _measure([checkov, "-d", "pinned", "--framework", "kubernetes", "--check", "CKV_K8S_43", "--quiet",
                  "--compact"], folder, checkov_row, env=CHECKOV_ENV, min_free_kib=min_free_kib)
        if checkov_row.killed:
            checkov_row.note = (f"killed: under {min_free_kib // 1024} MiB of memory left; "
                                "try --checkov-files with fewer files")
        else:
            checkov_row.note = (f"one run; machine's free memory fell {checkov_row.drops_kib[0] / 1024 ** 2:.1f} GiB "
                                f"(its workers included)")
        rows.append(checkov_row)
    print(f"{generated}; {references} references; median wall of {repeat} runs and max peak RSS, "
          "each run in a fresh interpreter")
    _table(rows, bare, "s", 1, 2)
    goals = []
    ratio = pinned.runs.wall / bare.runs.wall
    goals.append(f"{files} files: pinned check within {TREE_GOAL:g}x of the bare parse: {ratio:.2f}x, "
                 f"{_met(ratio <= TREE_GOAL)} (unpinned {unpinned.runs.wall / bare.runs.wall:.2f}x)")
    peak = max(row.runs.peak_mib for row in (pinned, unpinned, dlc))
    goals.append(f"{files} files: peak under {MEMORY_GOAL_MIB} MiB: {peak:.0f} MiB, {_met(peak <= MEMORY_GOAL_MIB)}")
    if checkov_row is not None and checkov_row.killed:
        goals.append(f"{files} files: at least {CHECKOV_GOAL:g}x faster than checkov: not measured (checkov killed)")
    elif checkov_row is not None:
        faster = checkov_row.runs.wall / pinned.runs.wall
        goals.append(f"{files} files: at least {CHECKOV_GOAL:g}x faster than checkov: {faster:.1f}x "
                     f"(unpinned {checkov_row.runs.wall / unpinned.runs.wall:.1f}x), {_met(faster >= CHECKOV_GOAL)}")
    return goals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=5000, help="manifests in the tree (default 5000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each tree command but checkov (default 3)")
    parser.add_argument("--repeat-one", type=int, default=20, help="runs of each one-file command (default 20)")
    parser.add_argument("--checkov", default=shutil.which("checkov"), help="checkov to compare with "
                        "(default: checkov on PATH)")
    parser.add_argument("--checkov-files", type=int, nargs="+", metavar="N",
                        help="tree sizes to run checkov on, each measured like the main tree (default: --files)")
    parser.add_argument("--min-free-mib", type=int, default=2048,
                        help="kill checkov when the machine has less memory available (default 2048)")
    args = parser.parse_args()
    compile_pinguard()
    if not os.access(TIME, os.X_OK):
        raise SystemExit(f"{TIME} (GNU time) is needed to read each command's peak memory")
    checkov_sizes = set(args.checkov_files or [args.files])
    goals = []
    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as tmp:
        base = Path(tmp)
        _outside_git(base)
        goals.append(one_file(base, args.repeat_one))
        for files in sorted(checkov_sizes | {args.files}, reverse=True):
            print()
            goals += tree(base, files, args.repeat, args.checkov, files in checkov_sizes, args.min_free_mib * 1024)
            shutil.rmtree(base / f"tree-{files}")
    if args.checkov is not None:
        version = subprocess.run([args.checkov, "--version"], capture_output=True, text=True, check=False,
                                 env={**os.environ, **CHECKOV_ENV}).stdout.strip()
        print(f"\ncheckov {version} ({args.checkov})")
    print("goals:")
    for line in goals:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
