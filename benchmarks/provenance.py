"""Requests per locked image with provenance discovery on: resolve (as `pinguard lock` does), then discover.

Two kinds of image, four of each (four frozen tags of one repository, a distinct image a tag):
- `dlc`: a DLC-style index: one linux/amd64 image, its SOCI index and its BuildKit
  attestation manifest (SLSA provenance and an SPDX SBOM, one layer each);
- `signed`: a multi-platform index (linux/amd64, linux/arm64) with BuildKit provenance
  for both platforms, signed with cosign on the index.
Two registries:
- `tags`: docker-registry 2.8 with TLS and bearer-token auth; it has no referrers API,
  so discovery uses the tag schemes (the signature is cosign's `sha256-HEX.sig` tag);
- `referrers`: the FAKE registry (`testing/fake_registry.py`) with the OCI 1.1 referrers
  API, the signature attached as a referrer (cosign's OCI 1.1 mode).
Both are reached through `testing/proxy.py` in quota mode, as in `quota.py`: a token bucket of
N requests a second, every request counted (tokens too), 429 without Retry-After past it.
Each set runs in one client: resolve every tag, then discover every locked image; cold
(empty cache), then warm (a new client on the same cache), each starting with a full bucket.
The floor is what the quota allows: successful requests / rate.

Run: `.venv/bin/python benchmarks/provenance.py [--rate 10]`.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pinguard.errors import PinguardError
from pinguard.provenance.discovery import discover
from pinguard.reference import Reference, parse
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.settings import RegistrySettings
from pinguard.resolve.resolved import Resolved
from pinguard.resolve.resolver import Resolver
from testing.attestations import (
    SPDX_DOCUMENT,
    attested_index,
    cosign_manifest,
    cosign_referrer,
    cosign_signature,
    cosign_tag,
    in_toto,
    served,
    statement,
)
from testing.fake_registry import FakeRegistry, serve_manifests, serve_referrers
from testing.images import Manifest, image
from testing.proxy import Arrival, LatencyProxy, Quota
from testing.registry import RunningRegistry, start_registry

ECR = "public.ecr.aws"
TAGS = ("v1.0.0", "v1.0.1", "v1.0.2", "v1.0.3")
Content = tuple[dict[str, Manifest], list[Manifest], dict[str, Manifest]]  # tagged, referrers, cosign tags


def _dlc(seed: str) -> Manifest:
    img = image(seed=seed, layers=2)
    statements = [in_toto(statement(img.digest)), in_toto(statement(img.digest, SPDX_DOCUMENT), SPDX_DOCUMENT)]
    return attested_index([(img, statements)], soci=True)


def _signed(seed: str) -> tuple[Manifest, Manifest, Manifest]:
    """The index, its cosign signature by tag, the same signature as a referrer."""
    images = [image(arch=arch, seed=f"{seed}-{arch}") for arch in ("amd64", "arm64")]
    index = attested_index([(img, [in_toto(statement(img.digest))]) for img in images])
    signature = cosign_signature(f'{{"critical": {{"image": {{"docker-manifest-digest": "{index.digest}"}}}}}}'
                                 .encode(), "TUVVQ0lRRHNpZ25hdHVyZQ==")
    return index, cosign_manifest([signature]), cosign_referrer(index, [signature])


def _content(kind: str) -> Content:
    tagged: dict[str, Manifest] = {}
    referrers: list[Manifest] = []
    cosign_tags: dict[str, Manifest] = {}
    for tag in TAGS:
        if kind == "dlc":
            tagged[tag] = _dlc(f"dlc-{tag}")
            continue
        index, by_tag, by_referrer = _signed(f"signed-{tag}")
        tagged[tag] = index
        cosign_tags[cosign_tag(index.digest, ".sig")] = by_tag
        referrers.append(by_referrer)
    return tagged, referrers, cosign_tags


def _kind(arrival: Arrival) -> str:
    what = "referrers" if arrival.kind == "other" and "/referrers/" in arrival.path else arrival.kind
    return f"{arrival.method} {what}"


def _run(proxy: LatencyProxy, repository: str, cache: Path, rate: float) -> tuple[list[Arrival], list[Arrival], float]:
    """The requests of resolving every tag, of discovering every locked image, and the wall time."""
    settings = RegistrySettings(mirrors={ECR: proxy.url}, rates={ECR: rate}, env={"HOME": str(cache.parent)})
    references = [parse(f"{ECR}/{repository}:{tag}") for tag in TAGS]
    time.sleep(2 / rate)  # each run starts with the bucket full, as a job run on its own would
    proxy.reset()
    started = time.perf_counter()
    with RegistryClient(settings, RegistryCache(cache)) as client:
        outcomes = Resolver(client).resolve_all(references)
        resolving = list(proxy.arrivals)
        for resolved in _locked(outcomes):
            discover(client, ECR, repository, resolved.digest, resolved.platforms.values())
    return resolving, list(proxy.arrivals)[len(resolving):], time.perf_counter() - started


def _locked(outcomes: Mapping[Reference, Resolved | PinguardError]) -> list[Resolved]:
    failed = [f"{reference}: {outcome}" for reference, outcome in outcomes.items()
              if isinstance(outcome, PinguardError)]
    if failed:
        raise SystemExit("\n".join(failed))
    return [outcome for outcome in outcomes.values() if isinstance(outcome, Resolved)]


def _measure(proxy: LatencyProxy, registry: str, kind: str, repository: str, rate: float, work: Path) -> None:
    cache = work / f"cache-{registry}-{kind}"
    for run in ("cold", "warm"):
        resolving, discovering, wall = _run(proxy, repository, cache, rate)
        made = len(resolving) + len(discovering)
        refused = sum(arrival.throttled for arrival in resolving + discovering)
        floor = (made - refused) / rate
        spent = Counter(map(_kind, discovering))
        where = ", ".join(f"{what} {count}" for what, count in sorted(spent.items()))
        print(f"{registry:<9} {kind:<6} {run:<4} {len(resolving) / len(TAGS):7.2f} {len(discovering) / len(TAGS):8.2f} "
              f"{made / len(TAGS):6.2f} {refused:4d} {wall:6.1f} {floor:6.1f}  {where}", flush=True)


@contextmanager
def _tag_registry(work: Path, content: Mapping[str, Content], rate: float) -> Iterator[LatencyProxy]:
    with start_registry(work, tls=True, token_auth=True) as registry:
        _push(registry, content)
        assert registry.token_server is not None
        with LatencyProxy(registry.url, delay=0, ca_file=registry.ca_file, token_url=registry.token_server.url,
                          quota=Quota(rate)) as proxy:
            yield proxy


def _push(registry: RunningRegistry, content: Mapping[str, Content]) -> None:
    pusher = registry.pusher()
    for repository, (tagged, _, cosign_tags) in content.items():
        for tag, manifest in {**tagged, **cosign_tags}.items():
            pusher.push(repository, manifest, tag)


@contextmanager
def _referrers_registry(content: Mapping[str, Content], rate: float) -> Iterator[LatencyProxy]:
    with FakeRegistry() as fake:
        for repository, (tagged, referrers, _) in content.items():
            manifests, blobs = served(tagged, referrers)
            fake.add(*serve_referrers(repository, manifests), *serve_manifests(repository, manifests, blobs=blobs))
        with LatencyProxy(fake.url, delay=0, quota=Quota(rate)) as proxy:
            yield proxy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=10.0, help="requests a second the quota proxy admits")
    args = parser.parse_args()
    content = {f"bench/{kind}": _content(kind) for kind in ("dlc", "signed")}
    print(f"{len(TAGS)} locked images a set; quota proxy at {args.rate:g}/s; figures are requests per locked image")
    print("registry  image  run  resolve discover  total  429 wall s floor s  discovery's requests")
    with tempfile.TemporaryDirectory(prefix="pinguard-provenance-") as tmp:
        work = Path(tmp)
        with _tag_registry(work / "registry", content, args.rate) as proxy:
            for repository in content:
                _measure(proxy, "tags", repository.removeprefix("bench/"), repository, args.rate, work)
        with _referrers_registry(content, args.rate) as proxy:
            for repository in content:
                _measure(proxy, "referrers", repository.removeprefix("bench/"), repository, args.rate, work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
