"""Resolve 100 tags in 20 repositories: pinguard beside kbld and a `skopeo inspect` loop, in one run.

A docker-registry with TLS and bearer-token auth is reached through
`testing/proxy.py`, which adds a latency to every request (half before
forwarding, half before answering: 20 and 100 ms a request by default, a
registry one region away and one across the world) and counts requests by
kind. Every tool goes through the same proxy:

- pinguard resolves all 100 in one command (`-j 32`, pacing lifted with
  `--rate`: this measures latency and CPU, `quota.py` measures pacing), cold
  (an empty cache) then warm (the cache of the cold run);
- kbld, when a binary is on PATH or named with `--kbld` (the benchmark never
  builds or downloads it), resolves the same 100 from one YAML file in one
  command (`--registry-insecure`: the proxy speaks plain HTTP); it keeps no
  cache, so its cold and warm runs are the same work twice;
- skopeo runs `skopeo inspect --raw` once per reference, one after another,
  as a script would.

Wall and CPU (the kernel's count for the child, getrusage) of each run,
requests per reference, and the ratios of kbld and skopeo to pinguard.
pinguard's CPU per request is its marginal cost: warm runs of 500 references
and of 100 (the same 20 repositories with 20 more frozen tags each), the best
of three each, their difference in CPU over their difference in requests, so
that start-up, imports and the policy are left out. Start-up is measured
twice: `python -X importtime` of `pinguard.cli` and of what an online command
imports before its first request, and the time from starting `pinguard
resolve` to its first request reaching the proxy.

Run: `.venv/bin/python benchmarks/resolve.py [--latency 20 100] [--kbld PATH] [--repeat N] [--no-auth]`.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from installed import PINGUARD, compile_pinguard

from testing.images import image, with_soci
from testing.proxy import LatencyProxy
from testing.push import Pusher
from testing.registry import start_registry

ROOT = Path(__file__).resolve().parent.parent
REPOSITORIES = 20
# Per repository: three frozen tags and two moving tags that share their digests.
TAGS = ("v1.0.0", "v1.0.1", "v1.1.0", "v1.0", "v1.1")
EXTRA_TAGS = 20  # more frozen tags per repository, for the 500 references of the CPU measure
ECR = "public.ecr.aws"
# What an online command imports before its first request, besides the command line itself.
ONLINE_MODULES = ("pinguard.commands.resolve", "pinguard.resolve.online", "pinguard.registry.client")


@dataclass
class Run:
    wall: float
    cpu: float
    requests: Counter[tuple[str, str]]
    first_request: float | None = None  # seconds from starting the process to its first request

    def per_ref(self, refs: int) -> float:
        return sum(self.requests.values()) / refs


def _seed(pusher_factory: Callable[[], Pusher]) -> tuple[list[str], list[str]]:
    """The 100 references of the comparison, and the 500 of the CPU measure."""
    pusher = pusher_factory()
    refs, more = [], []
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
        for extra in range(EXTRA_TAGS):
            pusher.push(repository, frozen["v1.0.0"], f"v3.0.{extra}")
            more.append(f"{repository}:v3.0.{extra}")
    return refs, refs + more


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(proxy: LatencyProxy, command: list[str], env: dict[str, str], cwd: Path | None = None) -> Run:
    """One run of `command` through the proxy: wall, the child's CPU, the requests it made."""
    proxy.reset()
    cpu = _children_cpu()
    started = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    wall = time.monotonic() - started
    first = min((arrival.at for arrival in proxy.arrivals), default=None)
    return Run(wall, _children_cpu() - cpu, Counter(proxy.counts), None if first is None else first - started)


def _pinguard(proxy: LatencyProxy, refs: list[str], cache: Path, jobs: int) -> Run:
    command = [*PINGUARD, "resolve", "-q", "-j", str(jobs), "--mirror", f"{ECR}={proxy.url}",
               "--rate", f"{ECR}=100000", *[f"{ECR}/{ref}" for ref in refs]]
    return _timed(proxy, command, {"PINGUARD_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}, cwd=ROOT)


def _kbld(kbld: str, proxy: LatencyProxy, refs: list[str], work: Path) -> Run:
    host = proxy.url.removeprefix("http://")
    config = work / "kbld-images.yml"
    config.write_text("images:\n" + "".join(f"- image: {host}/{ref}\n" for ref in refs))
    (work / "kbld-home").mkdir(exist_ok=True)  # no docker config: anonymous, as the other tools
    return _timed(proxy, [kbld, "-f", str(config), "--registry-insecure"],
                  {"HOME": str(work / "kbld-home"), "PATH": "/usr/bin:/bin"})


def _skopeo(proxy: LatencyProxy, refs: list[str]) -> Run:
    host = proxy.url.removeprefix("http://")
    proxy.reset()
    cpu, started = _children_cpu(), time.monotonic()
    for ref in refs:
        subprocess.run(["skopeo", "inspect", "--raw", "--no-creds", "--tls-verify=false", f"docker://{host}/{ref}"],
                       check=True, stdout=subprocess.DEVNULL)
    return Run(time.monotonic() - started, _children_cpu() - cpu, Counter(proxy.counts))


def _best(runs: list[Run]) -> Run:
    return min(runs, key=lambda run: run.wall)


def _import_ms(modules: tuple[str, ...]) -> tuple[float, list[tuple[float, str]]]:
    """Milliseconds `python -X importtime` spends importing `modules`, and the costliest modules by their own time."""
    code = "import " + ", ".join(modules)
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT)
    total, own = 0, []
    for line in result.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if found is None:
            continue
        own.append((int(found.group(1)) / 1000, found.group(4)))
        if found.group(3) == " ":  # imported at the top level: its cumulative time holds its imports'
            total += int(found.group(2))
    return total / 1000, sorted(own, reverse=True)[:8]


def _row(latency: str, tool: str, run: str, result: Run, refs: int) -> str:
    total = sum(result.requests.values())
    detail = ", ".join(f"{method} {kind} {n}" for (method, kind), n in sorted(result.requests.items()))
    return (f"{latency:>7} {tool:<12} {run:<5} {result.wall:7.2f} {result.cpu:6.2f} {result.per_ref(refs):7.2f}"
            f"  ({total}: {detail})")


def _cpu_per_request(proxy: LatencyProxy, more: list[str], refs: list[str], cache: Path, jobs: int) -> str:
    """pinguard's marginal CPU a request: warm runs of all of `more` and of `refs`, the best of three each."""
    proxy.delay = 0
    _pinguard(proxy, more, cache, jobs)  # the cache now knows every tag
    large = min((_pinguard(proxy, more, cache, jobs) for _ in range(3)), key=lambda run: run.cpu)
    small = min((_pinguard(proxy, refs, cache, jobs) for _ in range(3)), key=lambda run: run.cpu)
    requests = sum(large.requests.values()) - sum(small.requests.values())
    marginal = (large.cpu - small.cpu) / requests
    return (f"pinguard CPU per request: warm runs of {len(more)} and {len(refs)} references, {large.cpu:.2f} s and "
            f"{small.cpu:.2f} s (best of 3): {marginal * 1000:.2f} ms each over {requests} requests (goal <= 1.5 ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, nargs="+", default=[20.0, 100.0],
                        help="milliseconds added to each request (default: 20 100)")
    parser.add_argument("--jobs", type=int, default=32, help="pinguard's requests in flight (default 32)")
    parser.add_argument("--kbld", help="a kbld binary (default: kbld on PATH, if any)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, the fastest kept (default 1)")
    parser.add_argument("--no-auth", dest="auth", action="store_false", help="no TLS or token auth")
    args = parser.parse_args()
    compile_pinguard()
    kbld = args.kbld or shutil.which("kbld")
    if kbld is not None and not os.access(kbld, os.X_OK):
        parser.error(f"--kbld {kbld}: not an executable file")

    cli_ms, _ = _import_ms(("pinguard.cli",))
    online = tuple(name for name in ONLINE_MODULES if importlib.util.find_spec(name) is not None)
    online_ms, costliest = _import_ms(("pinguard.cli", *online))
    lines = [f"start-up: import pinguard.cli {cli_ms:.0f} ms; with {', '.join(online)} {online_ms:.0f} ms "
             "(python -X importtime); costliest modules by their own time: "
             + ", ".join(f"{name} {ms:.0f} ms" for ms, name in costliest)]
    if kbld is None:
        lines.append("kbld: absent (not on PATH, no --kbld); its rows and ratios are left out")

    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as tmp, \
            start_registry(Path(tmp), tls=args.auth, token_auth=args.auth) as registry:
        work = Path(tmp)
        refs, more = _seed(registry.pusher)
        token_url = registry.token_server.url if registry.token_server else None
        auth = "TLS and token auth" if args.auth else "plain HTTP, no auth"
        print(f"{len(refs)} references in {REPOSITORIES} repositories ({auth}), through a proxy adding "
              f"{', '.join(f'{ms:g}' for ms in args.latency)} ms to each request", flush=True)
        print("latency tool         run    wall s  CPU s req/ref", flush=True)
        with LatencyProxy(registry.url, delay=0, ca_file=registry.ca_file, token_url=token_url) as proxy:
            for latency in args.latency:
                proxy.delay = latency / 2000
                label = f"{latency:g} ms"
                caches = [work / f"cache-{latency:g}-{n}" for n in range(args.repeat)]
                cold = _best([_pinguard(proxy, refs, cache, args.jobs) for cache in caches])
                warm = _best([_pinguard(proxy, refs, cache, args.jobs) for cache in caches])
                results = {("pinguard", "cold"): cold, ("pinguard", "warm"): warm}
                if kbld is not None:
                    for run in ("cold", "warm"):
                        results[("kbld", run)] = _best([_kbld(kbld, proxy, refs, work) for _ in range(args.repeat)])
                results[("skopeo loop", "-")] = _skopeo(proxy, refs)
                for (tool, run), result in results.items():
                    print(_row(label, tool, run, result, len(refs)), flush=True)
                ratios = []
                if kbld is not None:
                    ratios.append(f"kbld/pinguard wall cold {results[('kbld', 'cold')].wall / cold.wall:.1f}x "
                                  f"(goal >= 4x), warm {results[('kbld', 'warm')].wall / warm.wall:.1f}x (goal >= 8x); "
                                  f"CPU cold {results[('kbld', 'cold')].cpu / cold.cpu:.1f}x, "
                                  f"warm {results[('kbld', 'warm')].cpu / warm.cpu:.1f}x")
                skopeo = results[("skopeo loop", "-")].wall
                ratios.append(f"skopeo/pinguard wall cold {skopeo / cold.wall:.1f}x, warm {skopeo / warm.wall:.1f}x")
                if warm.first_request is not None:
                    ratios.append(f"pinguard's first request {warm.first_request * 1000:.0f} ms after its start (warm)")
                lines.append(f"at {label}: " + "; ".join(ratios))
            lines.append(_cpu_per_request(proxy, more, refs, work / "cache-cpu", args.jobs))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
