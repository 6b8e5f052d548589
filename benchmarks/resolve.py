"""Resolve 100 tags across 20 repositories: pinguard versus a sequential `skopeo inspect` loop.

A docker-registry with TLS and bearer-token auth is reached through a proxy that
adds 20 ms each way (a registry one region away; on bare loopback process
start-up would hide everything). Both tools go through the same proxy, which
counts their requests. pinguard's pacing is lifted (`--rate`): this measures
latency and CPU, not a quota (`quota.py` does). Each pinguard run's CPU time is
read from the kernel (getrusage of the child); CPU per request is the marginal
cost, between a warm run of all references and one of a fifth of them, so that
start-up, imports and the policy are left out.
Run: `.venv/bin/python benchmarks/resolve.py [--delay S] [--no-auth]`.
"""
from __future__ import annotations

import argparse
import math
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testing.images import image, with_soci
from testing.proxy import LatencyProxy
from testing.registry import start_registry

REPOSITORIES = 20
# Per repository: three frozen tags and two moving tags that share their digests.
TAGS = ("v1.0.0", "v1.0.1", "v1.1.0", "v1.0", "v1.1")


def _seed(registry_url: str, pusher_factory: object) -> list[str]:
    pusher = pusher_factory()  # type: ignore[operator]
    refs = []
    for n in range(REPOSITORIES):
        repository = f"bench/model-{n:02d}"
        frozen = {
            "v1.0.0": image(seed=f"{n}-1.0.0"),
            "v1.0.1": with_soci(image(seed=f"{n}-1.0.1")),
            "v1.1.0": with_soci(image(seed=f"{n}-1.1.0")),
        }
        content = {**frozen, "v1.0": frozen["v1.0.1"], "v1.1": frozen["v1.1.0"]}
        for tag, manifest in content.items():
            pusher.push(repository, manifest, tag)
            refs.append(f"{repository}:{tag}")
    return refs


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _pinguard(proxy: LatencyProxy, refs: list[str], cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one `pinguard resolve` of every reference."""
    args = [sys.executable, "-m", "pinguard", "resolve", "-q", "--mirror", f"public.ecr.aws={proxy.url}",
            "--rate", "public.ecr.aws=100000"]
    started, cpu = time.perf_counter(), _children_cpu()
    subprocess.run([*args, *[f"public.ecr.aws/{r}" for r in refs]], check=True, stdout=subprocess.DEVNULL,
                   env={"PINGUARD_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"})
    return time.perf_counter() - started, _children_cpu() - cpu


def _skopeo(proxy: LatencyProxy, refs: list[str]) -> float:
    host = proxy.url.removeprefix("http://")
    started = time.perf_counter()
    for ref in refs:
        subprocess.run(["skopeo", "inspect", "--no-creds", "--tls-verify=false", f"docker://{host}/{ref}"],
                       check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _per_ref(counts: Counter[tuple[str, str]], refs: int) -> str:
    total = sum(counts.values())
    detail = ", ".join(f"{m} {k} {n}" for (m, k), n in sorted(counts.items()))
    return f"{total / refs:.2f} requests/ref ({total}: {detail})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=0.02, help="seconds added each way (default 0.02)")
    parser.add_argument("--jobs", type=int, default=8, help="pinguard's concurrency (its default is 8)")
    parser.add_argument("--no-auth", dest="auth", action="store_false", help="no TLS or token auth")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as tmp, \
            start_registry(Path(tmp), tls=args.auth, token_auth=args.auth) as registry:
        refs = _seed(registry.url, registry.pusher)
        token_url = registry.token_server.url if registry.token_server else None
        with LatencyProxy(registry.url, delay=args.delay, ca_file=registry.ca_file, token_url=token_url) as proxy:
            cold, cold_cpu = _pinguard(proxy, refs, Path(tmp) / "cache")
            cold_counts = Counter(proxy.counts)
            proxy.reset()
            warm, warm_cpu = _pinguard(proxy, refs, Path(tmp) / "cache")
            warm_counts = Counter(proxy.counts)
            proxy.reset()
            fifth_cpu = _pinguard(proxy, refs[:len(refs) // 5], Path(tmp) / "cache")[1]
            fifth_requests = sum(proxy.counts.values())
            proxy.reset()
            skopeo = _skopeo(proxy, refs)
            skopeo_counts = Counter(proxy.counts)
            # The same work with no latency added: what the proxy, registry and pinguard
            # cost in CPU on this machine, a floor no concurrency can go below.
            proxy.delay = 0
            floor_cold = _pinguard(proxy, refs, Path(tmp) / "cache-floor")[0]
            floor_warm = _pinguard(proxy, refs, Path(tmp) / "cache-floor")[0]

    rtt = 2 * args.delay
    requests_cold = sum(cold_counts.values())
    # Critical path of one moving tag on a cold cache: the first 401 that teaches the challenge,
    # token, GET by tag, tags/list, HEAD of the frozen candidate.
    critical = 5
    bound = max(critical, math.ceil(requests_cold / args.jobs)) * rtt
    n = len(refs)
    auth = "TLS and token auth" if args.auth else "plain HTTP, no auth"
    print(f"{n} references in {REPOSITORIES} repositories ({auth}), {args.delay * 1000:.0f} ms added each way")
    print(f"pinguard cold   {cold:6.2f} s  {_per_ref(cold_counts, n)}")
    print(f"pinguard warm   {warm:6.2f} s  {_per_ref(warm_counts, n)}")
    print(f"skopeo loop     {skopeo:6.2f} s  {_per_ref(skopeo_counts, n)}")
    print(f"lower bound at -j {args.jobs}: {bound:.2f} s cold "
          f"(max(critical path {critical}, {requests_cold} requests / {args.jobs}) round trips of {rtt * 1000:.0f} ms)")
    print(f"same work with no added latency: cold {floor_cold:.2f} s, warm {floor_warm:.2f} s "
          "(CPU of proxy, registry and pinguard on this machine)")
    print(f"ratio skopeo/pinguard: cold {skopeo / cold:.1f}x, warm {skopeo / warm:.1f}x")
    marginal = (warm_cpu - fifth_cpu) / (sum(warm_counts.values()) - fifth_requests)
    print(f"pinguard CPU: cold {cold_cpu:.2f} s, warm {warm_cpu:.2f} s, warm with a fifth of the references "
          f"{fifth_cpu:.2f} s: {marginal * 100:.2f} s per 100 requests ({marginal * 1000:.1f} ms each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
