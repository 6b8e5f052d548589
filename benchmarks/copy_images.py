"""Copy a set of images between two local registries: pinguard against `skopeo copy --all` image by image,
and against the floor, the same blob bytes copied file to file on this disk; in one run.

The set (`--size` of distinct blob bytes, 2 GB by default, over `--images` images) is what DLC images
look like: every image is three base layers they all share (a quarter, a tenth and a twentieth of the
size) and one layer of its own, each layer incompressible. Both registries are Debian's docker-registry
over plain HTTP on loopback, each tool copying into a fresh target. pinguard runs as its own process
(`pinguard.commands.copy`), its peak RSS read from the kernel; it runs a second time through a
counting proxy, to count the requests a copy already made costs. The floor copies each distinct blob's
file out of the source's storage with `shutil.copyfile`. The page cache is flushed (sync) before each
contender, and each reads the source's blobs from the same warm cache.
Run: `.venv/bin/python benchmarks/copy_images.py [--size 2G] [--images 6]`.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from testing.images import OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST
from testing.proxy import LatencyProxy
from testing.registry import RunningRegistry, start_registry

SOURCE = "public.ecr.aws"
BASE_SHARES = (0.25, 0.10, 0.05)  # of the size: the base layers every image shares
PIECE = 4 << 20  # bytes generated and pushed at a time
GOALS = {"skopeo": 2.0, "floor": 1.5, "rss_mb": 200.0, "requests_per_blob": 1.0}


@dataclass(frozen=True)
class Layer:
    seed: str
    size: int  # before gzip, which stores the bytes as they are (level 0): a real gzip stream, as large

    def pieces(self, pool: bytes) -> Iterator[bytes]:
        """The layer a piece at a time: the pool, each piece headed by what makes it this layer's, gzipped."""
        gzip = zlib.compressobj(0, zlib.DEFLATED, 31)
        for number, start in enumerate(range(0, self.size, PIECE)):
            head = hashlib.sha256(f"{self.seed}/{number}".encode()).digest()
            yield gzip.compress((head + pool)[:min(PIECE, self.size - start)])
        yield gzip.flush()

    def digest(self, pool: bytes) -> tuple[str, int]:
        """The layer's digest and size."""
        hashed, size = hashlib.sha256(), 0
        for piece in self.pieces(pool):
            hashed.update(piece)
            size += len(piece)
        return "sha256:" + hashed.hexdigest(), size


@dataclass(frozen=True)
class Image:
    repository: str
    digest: str
    manifest: bytes


def push_blob(url: str, repository: str, digest: str, pieces: Iterator[bytes]) -> None:
    with requests.Session() as session:
        session.trust_env = False
        started = session.post(f"{url}/v2/{repository}/blobs/uploads/", timeout=60)
        started.raise_for_status()
        location = requests.compat.urljoin(url + "/", started.headers["Location"])
        patched = session.patch(location, data=pieces, headers={"Content-Type": "application/octet-stream"},
                                timeout=600)
        patched.raise_for_status()
        location = requests.compat.urljoin(url + "/", patched.headers["Location"])
        done = session.put(location, params={"digest": digest}, timeout=600)
        done.raise_for_status()


def mount_blob(url: str, repository: str, digest: str, holder: str) -> None:
    response = requests.post(f"{url}/v2/{repository}/blobs/uploads/", params={"mount": digest, "from": holder},
                             timeout=60)
    if response.status_code != 201:
        raise SystemExit(f"seeding: {digest} not mounted into {repository}: {response.status_code}")


def push_manifest(url: str, repository: str, tag: str, data: bytes) -> None:
    response = requests.put(f"{url}/v2/{repository}/manifests/{tag}", data=data, timeout=60,
                            headers={"Content-Type": OCI_MANIFEST})
    response.raise_for_status()


def seed(source: RunningRegistry, size: int, images: int) -> tuple[list[Image], dict[str, int]]:
    """The set pushed to `source`: its images, and every distinct blob with its size."""
    pool = os.urandom(PIECE)
    base = [Layer(f"base-{n}", int(size * share)) for n, share in enumerate(BASE_SHARES)]
    own = (size - sum(layer.size for layer in base)) // images
    blobs: dict[str, int] = {}
    known = {layer: layer.digest(pool) for layer in base}
    pushed = []
    for number in range(images):
        repository = f"bench/image-{number}"
        layers = [*base, Layer(f"own-{number}", own)]
        descriptors = []
        for layer in layers:
            digest, layer_size = known.get(layer) or layer.digest(pool)
            if digest in blobs:
                mount_blob(source.url, repository, digest, "bench/image-0")
            else:
                push_blob(source.url, repository, digest, layer.pieces(pool))
            blobs[digest] = layer_size
            descriptors.append({"mediaType": OCI_LAYER_GZIP, "digest": digest, "size": layer_size})
        config = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {
            "type": "layers", "diff_ids": [d["digest"] for d in descriptors]}}).encode()
        config_digest = "sha256:" + hashlib.sha256(config).hexdigest()
        push_blob(source.url, repository, config_digest, iter([config]))
        blobs[config_digest] = len(config)
        manifest = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "layers": descriptors, "config": {
            "mediaType": OCI_CONFIG, "digest": config_digest, "size": len(config)}}).encode()
        push_manifest(source.url, repository, "v1", manifest)
        pushed.append(Image(repository, "sha256:" + hashlib.sha256(manifest).hexdigest(), manifest))
    return pushed, blobs


def lock_of(images: list[Image]) -> Lock:
    return Lock().with_entries(LockEntry(
        name=f"{SOURCE}/{image.repository}", tag="v1", digest=image.digest, media_type=OCI_MANIFEST,
        size=len(image.manifest), tag_kind="other", frozen_tag=None, resolved_at="2026-12-01T00:00:00Z",
        platforms={"linux/amd64": image.digest}) for image in images)


def floor(source: Path, blobs: dict[str, int], into: Path) -> float:
    """Seconds to copy each distinct blob's file of the source's storage to `into`."""
    into.mkdir()
    os.sync()
    started = time.monotonic()
    for digest in blobs:
        hexadecimal = digest.removeprefix("sha256:")
        shutil.copyfile(source / "docker/registry/v2/blobs/sha256" / hexadecimal[:2] / hexadecimal / "data",
                        into / hexadecimal)
    return time.monotonic() - started


def pinguard(path: Path, to: str, source_url: str, home: Path, mirror: str | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `copy` in a process of its own."""
    arguments = json.dumps({"lock": str(path), "to": to, "source": source_url, "home": str(home), "mirror": mirror})
    os.sync()
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-c", CHILD, arguments], cwd=Path(__file__).resolve().parent.parent)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"pinguard copy failed with status {process.returncode}")
    return seconds, usage.ru_maxrss / 1024


# One copy, as `pinguard copy` runs it (the command line's wiring aside), in a process that imports
# nothing else: its peak RSS is pinguard's.
CHILD = """
import json, os, sys
from pathlib import Path
from pinguard.commands.copy import copy
from pinguard.registry.settings import RegistrySettings
from pinguard.resolve.settings import OnlineSettings

given = json.loads(sys.argv[1])
target = given["to"].partition("/")[0]
mirrors = {"public.ecr.aws": given["source"], **({target: given["mirror"]} if given["mirror"] else {})}
settings = RegistrySettings(mirrors=mirrors, rates={"public.ecr.aws": 1000.0}, env={"HOME": given["home"]},
                            timeout=3600.0)
with open(os.devnull, "w") as quiet:
    sys.exit(copy(Path(given["lock"]), given["to"], OnlineSettings(settings, (), Path(given["home"]) / "cache"),
                  stdout=quiet))
"""


def skopeo(images: list[Image], source: str, target: str, home: Path) -> float:
    """Wall seconds of `skopeo copy --all` image by image, as a script around it does (digests kept, as a lock
    needs: `--preserve-digests` fails where skopeo would write a manifest of its own)."""
    # Its blob cache (as root, /var/lib/containers/cache) lets it mount what it copied before in this run;
    # what it recorded in earlier runs names registries that are gone.
    env = {**os.environ, "HOME": str(home)}
    os.sync()
    started = time.monotonic()
    for image in images:
        subprocess.run(["skopeo", "copy", "--all", "--preserve-digests", "--quiet", "--src-tls-verify=false",
                        "--dest-tls-verify=false",
                        f"docker://{source}/{image.repository}:v1", f"docker://{target}/{image.repository}:v1"],
                       check=True, env=env, timeout=3600)
    return time.monotonic() - started


def served(target: RunningRegistry, images: list[Image], prefix: str = "") -> bool:
    with requests.Session() as session:
        session.trust_env = False
        return all(session.get(f"{target.url}/v2/{prefix}{image.repository}/manifests/{image.digest}", timeout=60,
                               headers={"Accept": OCI_MANIFEST}).content == image.manifest for image in images)


def parse_size(text: str) -> int:
    units = {"K": 1e3, "M": 1e6, "G": 1e9}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1:].upper() in units else int(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("2G"), help="distinct blob bytes (2G)")
    parser.add_argument("--images", type=int, default=6)
    options = parser.parse_args()
    if shutil.which("skopeo") is None:
        raise SystemExit("skopeo not found: scripts/setup.sh installs it")
    with tempfile.TemporaryDirectory(prefix="pinguard-copy-bench-") as scratch:
        work = Path(scratch)
        with start_registry(work / "source") as source:
            print(f"seeding {options.size / 1e9:.2f} GB of distinct blobs over {options.images} images ...",
                  flush=True)
            images, blobs = seed(source, options.size, options.images)
            total = sum(size for size in blobs.values())
            logical = sum(sum(item["size"] for item in json.loads(image.manifest)["layers"]) for image in images)
            floor_s = floor(work / "source/storage", blobs, work / "floor")
            path = work / "pinguard.lock"
            lockfile.write(path, lock_of(images))
            home = work / "home"
            home.mkdir()
            with start_registry(work / "pinguard-target") as target:
                first_s, rss = pinguard(path, target.host, source.url, home)
                # pinguard keeps the source registry in each copy's name (`copy.retarget`).
                assert served(target, images, f"{SOURCE}/"), "pinguard's copy does not serve every image"
                with LatencyProxy(target.url, delay=0) as proxy:  # the same names, reached through the proxy
                    again_s, _ = pinguard(path, target.host, source.url, home, mirror=proxy.url)
                    requests_made = len(proxy.arrivals)
            with start_registry(work / "skopeo-target") as target:
                skopeo_s = skopeo(images, source.host, target.host, work / "skopeo-home")
                assert served(target, images), "skopeo's copy does not serve every image"
    report(options.images, logical, total, len(blobs), floor_s, first_s, skopeo_s, rss, again_s, requests_made)


def report(images: int, logical: int, total: int, blobs: int, floor_s: float, pinguard_s: float, skopeo_s: float,
           rss: float, again_s: float, requests_made: int) -> None:
    per_blob = requests_made / blobs
    rows = [
        ("floor (file copy)", floor_s, "", ""),
        ("skopeo copy --all", skopeo_s, "", ""),
        ("pinguard copy", pinguard_s, f"{skopeo_s / pinguard_s:.2f}x skopeo", f"{pinguard_s / floor_s:.2f}x floor"),
    ]
    print(f"\n{images} images, {logical / 1e9:.2f} GB of layers, {blobs} distinct blobs of {total / 1e9:.2f} GB")
    print(f"{'':20} {'wall s':>8} {'GB/s (set)':>10} {'GB/s (blobs)':>12}")
    for name, seconds, *ratios in rows:
        print(f"{name:20} {seconds:8.2f} {logical / seconds / 1e9:10.2f} {total / seconds / 1e9:12.2f}  "
              f"{'  '.join(r for r in ratios if r)}")
    goals = [
        (f"throughput >= {GOALS['skopeo']:g}x skopeo", skopeo_s / pinguard_s >= GOALS["skopeo"],
         f"{skopeo_s / pinguard_s:.2f}x"),
        (f"wall <= {GOALS['floor']:g}x the floor", pinguard_s / floor_s <= GOALS["floor"],
         f"{pinguard_s / floor_s:.2f}x"),
        (f"peak RSS <= {GOALS['rss_mb']:g} MB", rss <= GOALS["rss_mb"], f"{rss:.0f} MB"),
        (f"second run <= {GOALS['requests_per_blob']:g} request/blob", per_blob <= GOALS["requests_per_blob"],
         f"{requests_made} requests for {blobs} blobs ({per_blob:.2f}), {again_s:.2f} s"),
    ]
    for goal, met, figure in goals:
        print(f"{goal:36} {'met' if met else 'NOT MET':8} {figure}")


if __name__ == "__main__":
    main()
