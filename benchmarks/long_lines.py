"""Work that must grow with the input, not with its square: `check` on one long line, and reading a big lockfile.

- `check` on a Kubernetes `List` of N Pods (default 8,000; each unpinned, so two
  findings a Pod) written one Pod a line and all on one line, each file ending in a
  suppression comment so the comments are read too; every command in a fresh
  interpreter, against `pinguard scan` of the one-line file. Every finding once
  searched its whole line for a suppression: one line was 21x slower than many.
- `--big-mb M`: the same on one line of M MB (default 10), check against scan.
- Reading `pinguard.lock` of n and 4n entries (default 2,000 and 8,000), in this
  process, best of `--repeat`: `lockfile.loads`, and the rule `unused-lock-entry`
  with every entry unused. Each `[[image]]` once counted the lines from the start
  of the file: 4n entries cost 10.5x n's.

Goals: one line within 1.3x of many lines; 4n entries within 1.3x of four times n's.
Run: `.venv/bin/python benchmarks/long_lines.py [--pods N] [--big-mb M] [--entries n ...] [--repeat K]`.
"""
from __future__ import annotations

import argparse
import functools
import itertools
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# scan_pin puts the repository root on sys.path, so pinguard imports after it.
from installed import PINGUARD, compile_pinguard
from scan_pin import _outside_git

from pinguard.lock.lockfile import Lock, LockEntry, dumps, loads
from pinguard.policy.rules import unused_lock_entry
from pinguard.policy.rules.common import Context

GOAL = 1.3
POD = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, '
       '"spec": {"containers": [{"name": "web", "image": "nginx:1.27.0"}]}}')
COMMENT = "  # pinguard: ignore[allowed-registries] the registries are checked elsewhere\n"


def _list(pods: int, separator: str) -> str:
    return '{"apiVersion": "v1", "kind": "List", "items": [' + separator.join([POD] * pods) + "]}" + COMMENT


def _wall(args: list[str], cwd: Path, repeat: int) -> float:
    """Median wall time of `repeat` runs of a pinguard command, its output to /dev/null."""
    walls = []
    for _ in range(repeat):
        started = time.perf_counter()
        code = subprocess.run([*PINGUARD, *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              check=False).returncode
        walls.append(time.perf_counter() - started)
        if code not in (0, 1):  # 1: findings reported, the work being timed
            raise SystemExit(f"pinguard {' '.join(args)} exited {code}")
    return statistics.median(walls)


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def check_lines(base: Path, pods: int, big_mb: float, repeat: int) -> list[str]:
    for name, text in (("many", _list(pods, ",\n")), ("one", _list(pods, ", "))):
        (base / name).mkdir()
        (base / name / "list.yaml").write_text(text, encoding="utf-8")
    many = _wall(["check", "many"], base, repeat)
    one = _wall(["check", "one"], base, repeat)
    scan = _wall(["scan", "--format", "json", "one"], base, repeat)
    print(f"check on a List of {pods} Pods ({2 * pods} findings), median of {repeat} runs, each a fresh interpreter")
    print(f"  one Pod a line   {many:7.2f} s")
    print(f"  all on one line  {one:7.2f} s  ({one / many:.2f}x)")
    print(f"  scan, one line   {scan:7.2f} s")
    goals = [f"{pods} Pods: one line within {GOAL}x of many lines: {one / many:.2f}x, {_met(one / many <= GOAL)}"]
    big = _list(int(big_mb * 1_000_000) // (len(POD) + 2), ", ")
    (base / "big").mkdir()
    (base / "big" / "list.yaml").write_text(big, encoding="utf-8")
    check = _wall(["check", "big"], base, 1)
    scan = _wall(["scan", "--format", "json", "big"], base, 1)
    print(f"one line of {len(big) / 1e6:.1f} MB ({big.count('image')} Pods), one run each")
    print(f"  check {check:7.2f} s, scan {scan:7.2f} s ({check / scan:.2f}x)")
    return goals


def _lock(entries: int) -> Lock:
    return Lock().with_entries(LockEntry(
        name=f"registry.example.com/team/app{n}", tag="1.0", digest=f"sha256:{n:064x}",
        media_type="application/vnd.oci.image.manifest.v1+json", size=0, tag_kind="other", frozen_tag=None,
        resolved_at="2026-11-30T00:00:00Z", platforms={}) for n in range(entries))


def _best(work: Callable[[], object], repeat: int) -> float:
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - started)
    return min(seconds)


def _unused(context: Context, text: str) -> None:
    """The rule with every entry unused: each is placed on its `[[image]]` line."""
    for _ in unused_lock_entry.check({}, [], context, text):
        pass


def lockfiles(sizes: list[int], repeat: int) -> list[str]:
    print(f"pinguard.lock read in this process, best of {repeat}")
    print(f"  {'entries':>8} {'bytes':>11} {'loads s':>8} {'unused-lock-entry s':>20}")
    rows = []
    for entries in sizes:
        lock = _lock(entries)
        text = dumps(lock)
        context = Context(lock, "pinguard.lock")
        read = _best(functools.partial(loads, text), repeat)
        rule = _best(functools.partial(_unused, context, text), repeat)
        rows.append((entries, read, rule))
        print(f"  {entries:8d} {len(text):11d} {read:8.3f} {rule:20.3f}")
    goals = []
    for (small, read, rule), (large, read4, rule4) in itertools.pairwise(rows):
        if large != 4 * small:
            continue
        for label, before, after in (("loads", read, read4), ("unused-lock-entry", rule, rule4)):
            growth = after / (4 * before)
            goals.append(f"{label}: {large} entries within {GOAL}x of four times {small}'s: {growth:.2f}x, "
                         f"{_met(growth <= GOAL)}")
    return goals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=8000, help="Pods in the List (default 8000)")
    parser.add_argument("--big-mb", type=float, default=10.0, help="megabytes of the one-line List (default 10)")
    parser.add_argument("--entries", type=int, nargs="+", default=[2000, 8000],
                        help="lockfile sizes; each one four times the one before is judged (default 2000 8000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measure (default 3)")
    args = parser.parse_args()
    compile_pinguard()
    goals = lockfiles(args.entries, args.repeat)
    print()
    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as tmp:
        base = Path(tmp)
        _outside_git(base)
        goals = check_lines(base, args.pods, args.big_mb, args.repeat) + goals
    print("goals:")
    for line in goals:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
