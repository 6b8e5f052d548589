"""`pinguard export admission` of 1,000 to 50,000 entries of three digests each: the new layouts beside the old.

For each lock size, a lockfile of entries each with an index and two platform images
(`registry.example.com/team-NN/image-NNNNN:1.0`), then in fresh interpreters (the best
of `--runs` wall times):

- `pinguard export admission --output admission.yaml`: what it writes (the params'
  layout, its ConfigMaps and bindings, the largest ConfigMap's size as etcd would store
  it, `params.stored_size`, which must stay under `params.STORED_BUDGET`);
- `pinguard check admission.yaml`: stale-admission reading the committed export back.

Side by side, in this process: the same objects rendered as the export renders them
(libyaml's emitter for the documents it writes byte for byte as PyYAML does) and with
PyYAML's emitter alone, as before; the ratio of the two. Before, a lock whose names fit
no grid of `MAX_CELLS` cells was refused: those rows say so.

    .venv/bin/python benchmarks/admission_export.py [--entries 1000 5000 20000 50000] [--runs N]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pinguard.admission import export, params  # noqa: E402
from pinguard.admission.objects import COMPONENT, PARAMS_COMPONENT, POLICY_COMPONENT, Source  # noqa: E402
from pinguard.lock import lockfile  # noqa: E402
from pinguard.lock.lockfile import Lock, LockEntry  # noqa: E402
from testing.lockdata import INDEX, locked_test_digest  # noqa: E402

PLATFORMS = ("linux/amd64", "linux/arm64")


def _lock(entries: int) -> Lock:
    def entry(index: int) -> LockEntry:
        name = f"registry.example.com/team-{index % 50:02}/image-{index:05}"
        return LockEntry(name, "1.0", locked_test_digest(name, "1.0"), INDEX, 0, "other", None, "t",
                         {platform: locked_test_digest(name, platform) for platform in PLATFORMS})
    return Lock().with_entries(entry(index) for index in range(entries))


def _best(run: Callable[[], object], runs: int) -> float:
    """The fastest of `runs` wall times: the least disturbed by the rest of the machine."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _command(args: list[str], cwd: Path) -> Callable[[], object]:
    def run() -> None:
        done = subprocess.run([sys.executable, "-m", "pinguard", *args], cwd=cwd, capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise SystemExit(f"pinguard {' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}"
                             f"{done.stderr[-2000:]}")
    return run


def _render(source: Source, pure: bool) -> Callable[[], object]:
    def run() -> str:
        kept = export._CDumper
        export._CDumper = None if pure else kept
        try:
            return export.render(source, "vap", (), "deny")
        finally:
            export._CDumper = kept
    return run


def measure(entries: int, runs: int, scratch: Path) -> str:
    folder = scratch / str(entries)
    folder.mkdir()
    lock = _lock(entries)
    lockfile.write(folder / "pinguard.lock", lock)
    exported = _best(_command(["export", "admission", "--output", "admission.yaml"], folder), runs)
    checked = _best(_command(["check", "admission.yaml"], folder), runs)
    objects = list(yaml.load_all((folder / "admission.yaml").read_text(), Loader=yaml.CSafeLoader))
    cells = [obj for obj in objects if obj["kind"] == "ConfigMap"
             and obj["metadata"]["labels"][COMPONENT] == PARAMS_COMPONENT]
    bindings = sum(obj["kind"] == "ValidatingAdmissionPolicyBinding"
                   and obj["metadata"]["labels"][COMPONENT] == POLICY_COMPONENT for obj in objects)  # not the keepalive
    largest = max(params.stored_size(cell) for cell in cells)
    layout = cells[0]["metadata"]["labels"]["pinguard.dev/layout"] + (
        "" if params.OMITTED in cells[0]["data"] else " named")
    source = Source(lock, "pinguard.lock", "0" * 64)
    fast = _best(_render(source, pure=False), runs)
    if params.OMITTED in cells[0]["data"]:
        before = "refused (no grid fits)"
    else:
        pure = _best(_render(source, pure=True), runs)
        before = f"{pure:8.2f} s, {pure / fast:5.1f}x"
    return (f"{entries:>7,} {3 * entries:>8,} {layout:>11} {len(cells):>4} {bindings:>5} "
            f"{largest / 1024:>8.0f} {exported:>8.2f} {checked:>8.2f} {fast:>8.2f}   {before}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[1000, 5000, 20000, 50000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"entries of 3 digests; best of {args.runs} runs; stored: the largest ConfigMap as etcd stores it "
          f"(budget {params.STORED_BUDGET // 1024} KiB); export and check: `pinguard` in a fresh interpreter; "
          "render: the same objects as YAML in this process, and with PyYAML's emitter alone as before")
    print(f"{'entries':>7} {'digests':>8} {'layout':>11} {'cms':>4} {'binds':>5} {'KiB':>8} {'export s':>8} "
          f"{'check s':>8} {'render s':>8}   before: PyYAML alone, its ratio")
    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as scratch:
        for entries in args.entries:
            print(measure(entries, args.runs, Path(scratch)), flush=True)


if __name__ == "__main__":
    main()
