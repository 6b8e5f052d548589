"""Resolve 40 references through a proxy that enforces a request quota the way ECR Public does.

docker-registry with TLS and bearer-token auth holds two sets of ten tags in
four repositories each (`testing/seed.py: seed_families`): DLC-style indexes
with a SOCI entry, and single-platform images. Each tag family has eight frozen
tags (`v1.0.0` ... `v2.0.1`) and two moving ones (`v1.0`, `v1.1`) sharing the
digests of their newest patch. pinguard resolves each set of 40 in one command
through `testing/proxy.py` at 1, 2 and 10 requests a second (a token bucket;
429 TOOMANYREQUESTS without Retry-After past it; every request counted, tokens
too), first with an empty cache, then warm, each run starting with the bucket
full (two request intervals apart). At 1/s pinguard runs with its
defaults (ECR Public's anonymous quota); at 2 and 10 with `--rate`.

The floor is what the quota allows: successful requests / rate. Goals: no
failure, wall <= 1.2x the floor, 429s <= 5% of requests, cold <= 1.3
requests/reference for indexes and <= 2.1 for single-platform images (their
config blob included), warm <= 1.05.

Run: `.venv/bin/python benchmarks/quota.py [--rates 1 2 10]`.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from installed import PINGUARD, compile_pinguard

from testing.proxy import LatencyProxy, Quota
from testing.registry import RunningRegistry, start_registry
from testing.seed import seed_families

ECR = "public.ecr.aws"
GOALS = {"index": 1.3, "single": 2.1}  # cold requests per reference


def _resolve(proxy: LatencyProxy, references: list[str], cache: Path, rate: float) -> tuple[int, float]:
    pace = [] if rate == 1 else ["--rate", f"{ECR}={rate:g}"]
    args = [*PINGUARD, "resolve", "-q", "--mirror", f"{ECR}={proxy.url}", *pace]
    started = time.perf_counter()
    result = subprocess.run([*args, *references], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={"PINGUARD_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}, check=False)
    if result.returncode != 0:
        print(result.stderr, file=sys.stderr)
    return result.returncode, time.perf_counter() - started


def _measure(registry: RunningRegistry, name: str, references: list[str], rate: float, work: Path) -> list[str]:
    assert registry.token_server is not None
    cache = work / f"cache-{name}-{rate:g}"
    rows = []
    with LatencyProxy(registry.url, delay=0, ca_file=registry.ca_file, token_url=registry.token_server.url,
                      quota=Quota(rate)) as proxy:
        for run in ("cold", "warm"):
            time.sleep(2 / rate)  # each run starts with the bucket full, as a job run on its own would
            proxy.reset()
            status, wall = _resolve(proxy, references, cache, rate)
            made, refused = len(proxy.arrivals), proxy.throttled
            floor = (made - refused) / rate
            per_ref = made / len(references)
            goal = GOALS[name] if run == "cold" else 1.05
            met = status == 0 and wall <= 1.2 * floor and refused <= 0.05 * made and per_ref <= goal
            rows.append(f"{rate:>4g}/s {name:<6} {run:<4} {wall:7.1f} {floor:7.1f} {wall / floor:6.2f}x "
                        f"{per_ref:8.2f} {made:5d} {refused:4d} {'ok' if status == 0 else 'FAILED':>6}  "
                        f"{'met' if met else 'missed'} (<= {goal} requests/ref)")
            print(rows[-1], flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", type=float, nargs="+", default=[1.0, 2.0, 10.0])
    args = parser.parse_args()
    compile_pinguard()
    with tempfile.TemporaryDirectory(prefix="pinguard-quota-") as tmp, \
            start_registry(Path(tmp), tls=True, token_auth=True) as registry:
        pusher = registry.pusher()
        sets = {name: [f"{ECR}/{ref}" for ref in seed_families(pusher, f"bench/{name}", 4, index=name == "index")]
                for name in ("index", "single")}
        print("40 references a set, 4 repositories; quota proxy: token bucket, 429 without Retry-After")
        print("rate   set    run   wall s floor s  ratio req/ref  made  429 status  goal")
        for rate in args.rates:
            for name, references in sets.items():
                _measure(registry, name, references, rate, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
