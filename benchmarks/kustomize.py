"""A kustomization judged by pinguard against `kubectl kustomize` alone: the ratio of their wall times.

pinguard's `check` on an overlay builds it once (no build kept) and reads every image of the build:
it should cost at most one build more than `kubectl kustomize` itself, a ratio of 2 or less. With the
build kept (nothing changed since the last run) it builds nothing.

    .venv/bin/python benchmarks/kustomize.py [--kubectl PATH] [--runs N]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "testdata" / "kustomize"


def _best(command: list[str], runs: int, env: dict[str, str], cwd: Path) -> float:
    """The fastest of `runs` wall times: the least disturbed by the rest of the machine."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubectl", default=str(ROOT / ".venv" / "kubectl" / "kubectl"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not Path(args.kubectl).is_file():
        raise SystemExit(f"no kubectl at {args.kubectl}: run scripts/install_helm.sh or give --kubectl PATH")
    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as scratch:
        tree = Path(scratch, "tree")
        shutil.copytree(FIXTURES, tree)
        (tree / "pinguard.lock").write_text("version = 1\n")
        cache = Path(scratch, "cache")
        env = {**os.environ, "PINGUARD_CACHE_DIR": str(cache), "HOME": scratch}
        overlay = "overlays/components"
        alone = _best([args.kubectl, "kustomize", overlay], args.runs, env, tree)
        check = [sys.executable, "-m", "pinguard", "check", "--kustomize", args.kubectl, overlay]
        times = []
        for _ in range(args.runs):
            for kept in cache.glob("kustomize/*"):  # no build kept: pinguard builds every time
                if kept.is_file():
                    kept.unlink()
            times.append(_best(check, 1, env, tree))
        cold = min(times)
        warm = _best(check, args.runs, env, tree)
        print(f"kubectl kustomize {overlay}: {alone * 1000:.0f} ms")
        print(f"pinguard check (cold cache): {cold * 1000:.0f} ms, ratio {cold / alone:.2f}")
        print(f"pinguard check (warm cache): {warm * 1000:.0f} ms, ratio {warm / alone:.2f}")
        plain = _best([sys.executable, "-m", "pinguard", "check", "base/deployment.yaml"], args.runs, env, tree)
        print(f"pinguard check of one manifest, no kustomization (its start and checking): {plain * 1000:.0f} ms; "
              f"cold minus that: {(cold - plain) / alone:.2f} builds")


if __name__ == "__main__":
    main()
