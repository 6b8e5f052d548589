"""Two registries for `pinguard copy`: a source as ECR Public is (TLS, token auth, its quota, through a
proxy that counts) and a target (plain HTTP on loopback, through a proxy that counts), with images to copy.

The images are what copying has to get right: layers several images share, a multi-platform index
with a SOCI index and BuildKit attestations, a cosign-signed image with an OCI referrer, and one
layer large enough to be sent in several chunks. `entry` locks a pushed image as `pinguard lock`
would, and `served` reads the target back with requests of its own, apart from pinguard's client.
"""
from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from pinguard.lock.lockfile import LockEntry
from pinguard.registry.settings import RegistrySettings, RetryPolicy
from testing.images import (
    OCI_CONFIG,
    OCI_INDEX,
    OCI_LAYER_GZIP,
    OCI_MANIFEST,
    Blob,
    Manifest,
    attestation_for,
    index,
    soci_index_for,
)
from testing.proxy import LatencyProxy, Quota
from testing.registry import RunningRegistry, start_registry

SOURCE = "public.ecr.aws"  # the name images are locked under; the source registry stands in for it
SOURCE_QUOTA = 40.0  # requests a second the proxy allows, as ECR Public allows its one
PACED_AT = 30.0  # what pinguard is told to keep to (--rate): under the quota, so nothing is refused
COSIGN_SIGNATURE = "application/vnd.dev.cosign.simplesigning.v1+json"
SPDX = "application/spdx+json"
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def noise(seed: str, size: int) -> bytes:
    """`size` bytes that do not compress, the same for the same seed."""
    return random.Random(seed).randbytes(size)


def layer(seed: str, size: int = 2048) -> Blob:
    return Blob(OCI_LAYER_GZIP, noise(seed, size))


def image_of(layers: Sequence[Blob], *, seed: str, arch: str = "amd64") -> Manifest:
    """An OCI image of these layers (shared with other images as the caller likes), its config from `seed`."""
    config = Blob(OCI_CONFIG, json.dumps({
        "architecture": arch, "os": "linux", "config": {"Labels": {"seed": seed}},
        "rootfs": {"type": "layers", "diff_ids": [blob.digest for blob in layers]},
    }).encode())
    document = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": config.descriptor(),
                "layers": [blob.descriptor() for blob in layers]}
    return Manifest(OCI_MANIFEST, json.dumps(document).encode(), (config, *layers))


def multi_platform_with_artifacts(base: Sequence[Blob], seed: str) -> Manifest:
    """An index as DLC and buildx publish them: amd64 and arm64 images, a SOCI index for amd64,
    and a BuildKit attestation manifest for each image."""
    amd64 = image_of([*base, layer(f"{seed}-amd64")], seed=f"{seed}-amd64")
    arm64 = image_of([*base, layer(f"{seed}-arm64")], seed=f"{seed}-arm64", arch="arm64")
    soci = soci_index_for(amd64)
    linux = {"os": "linux"}
    unknown = {"architecture": "unknown", "os": "unknown"}
    return index([
        (amd64, {**linux, "architecture": "amd64"}, {"com.amazon.soci.index-digest": soci.digest}),
        (soci, {**linux, "architecture": "amd64"}, {"com.amazon.soci.image-manifest-digest": amd64.digest}),
        (arm64, {**linux, "architecture": "arm64"}, None),
        (attestation_for(amd64), unknown, {"vnd.docker.reference.digest": amd64.digest,
                                           "vnd.docker.reference.type": "attestation-manifest"}),
        (attestation_for(arm64), unknown, {"vnd.docker.reference.digest": arm64.digest,
                                           "vnd.docker.reference.type": "attestation-manifest"}),
    ])


def cosign_signature(subject: Manifest, repository: str) -> Manifest:
    """What `cosign sign` pushes as `sha256-HEX.sig`: the simple-signing payload as a layer."""
    payload = json.dumps({"critical": {"identity": {"docker-reference": f"{SOURCE}/{repository}"},
                                       "image": {"docker-manifest-digest": subject.digest},
                                       "type": "cosign container image signature"}, "optional": None}).encode()
    signed = Blob(COSIGN_SIGNATURE, payload)
    config = Blob(OCI_CONFIG, json.dumps({"architecture": "", "os": "", "config": {},
                                          "rootfs": {"type": "layers", "diff_ids": [signed.digest]}}).encode())
    layers = [{**signed.descriptor(), "annotations": {"dev.cosignproject.cosign/signature": "c2lnbmF0dXJl"}}]
    document = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": config.descriptor(), "layers": layers}
    return Manifest(OCI_MANIFEST, json.dumps(document).encode(), (config, signed))


def sbom_referrer(subject: Manifest) -> Manifest:
    """An OCI 1.1 referrer (an SBOM) whose `subject` is `subject`."""
    empty = Blob("application/vnd.oci.empty.v1+json", b"{}")
    sbom = Blob(SPDX, json.dumps({"spdxVersion": "SPDX-2.3", "name": subject.digest}).encode())
    document = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": SPDX, "config": empty.descriptor(),
                "layers": [sbom.descriptor()], "subject": subject.descriptor()}
    return Manifest(OCI_MANIFEST, json.dumps(document).encode(), (empty, sbom))


def referrers_index(referrers: Sequence[Manifest]) -> Manifest:
    """The index a client writes at the referrers tag (`sha256-HEX`) where a registry has no referrers API."""
    entries = [{**r.descriptor(), "artifactType": r.artifact_type} for r in referrers]
    data = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries}).encode()
    return Manifest(OCI_INDEX, data, (), tuple(referrers))


def referrers_tag(digest: str) -> str:
    return digest.replace(":", "-")


def entry(repository: str, tag: str, pushed: Manifest) -> LockEntry:
    """`pushed` locked under `public.ecr.aws/<repository>:<tag>`, its platforms as the lock records them."""
    platforms: dict[str, str] = {}
    if pushed.media_type == OCI_INDEX:
        for item in pushed.document["manifests"]:
            platform = item.get("platform") or {}
            runnable = "unknown" not in platform.values() and "com.amazon.soci.image-manifest-digest" not in (
                item.get("annotations") or {})
            if platform and runnable:
                platforms[f"{platform['os']}/{platform['architecture']}"] = item["digest"]
    else:
        platforms["linux/amd64"] = pushed.digest
    return LockEntry(name=f"{SOURCE}/{repository}", tag=tag, digest=pushed.digest, media_type=pushed.media_type,
                     size=len(pushed.data), tag_kind="other", frozen_tag=None, resolved_at="2026-11-30T00:00:00Z",
                     platforms=platforms)


def digests(manifest: Manifest) -> Iterator[tuple[str, str]]:
    """(kind, digest) of everything in a pushed tree: "manifest" or "blob"."""
    yield "manifest", manifest.digest
    for blob in manifest.blobs:
        yield "blob", blob.digest
    for child in manifest.children:
        yield from digests(child)


@dataclass
class World:
    """The two registries, each behind a proxy that counts what reaches it."""

    source: RunningRegistry
    source_proxy: LatencyProxy
    target: RunningRegistry
    target_proxy: LatencyProxy

    @property
    def target_host(self) -> str:
        """The target as a copy names it: the proxy's address."""
        return self.target_proxy.url.removeprefix("http://")

    def settings(self, home: Path, **overrides: Any) -> RegistrySettings:
        """What the command line would hand `copy`: the source's mirror and CA, its pace, short retries."""
        values: dict[str, Any] = {
            "mirrors": {SOURCE: self.source_proxy.url}, "ca_file": self.source.ca_file,
            "rates": {SOURCE: PACED_AT}, "env": {"HOME": str(home)}, "timeout": 120.0,
            "retry": RetryPolicy(attempts=3, base_delay=0.05, max_delay=0.2, budget=5)}
        return RegistrySettings(**{**values, **overrides})

    def writes_to_target(self) -> list[str]:
        return [f"{a.method} {a.path}" for a in self.target_proxy.arrivals if a.method in WRITES]

    def push(self, repository: str, manifest: Manifest, tag: str | None = None) -> str:
        return self.source.pusher().push(repository, manifest, tag)


@contextmanager
def two_registries(workdir: Path, *, target_delay: float = 0.0) -> Iterator[World]:
    """A source as ECR Public is (TLS, token auth, its quota) and a plain target, each behind a counting proxy."""
    with ExitStack() as stack:
        source = stack.enter_context(start_registry(workdir / "source", tls=True, token_auth=True))
        target = stack.enter_context(start_registry(workdir / "target"))
        assert source.token_server is not None
        source_proxy = stack.enter_context(LatencyProxy(source.url, delay=0, ca_file=source.ca_file,
                                                        token_url=source.token_server.url,
                                                        quota=Quota(SOURCE_QUOTA, burst=SOURCE_QUOTA)))
        target_proxy = stack.enter_context(LatencyProxy(target.url, delay=target_delay))
        yield World(source, source_proxy, target, target_proxy)


def served(base_url: str, repository: str, digest: str, kind: str = "manifest") -> bytes | None:
    """What the registry at `base_url` serves for `digest` (None: nothing), read with requests alone."""
    accept = ", ".join((OCI_INDEX, OCI_MANIFEST, "application/vnd.docker.distribution.manifest.v2+json",
                        "application/vnd.docker.distribution.manifest.list.v2+json"))
    path = "manifests" if kind == "manifest" else "blobs"
    with requests.Session() as session:
        session.trust_env = False
        response = session.get(f"{base_url}/v2/{repository}/{path}/{digest}", headers={"Accept": accept}, timeout=30)
    if response.status_code == 404:
        return None
    response.raise_for_status()
    return response.content


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def tags_of(base_url: str, repository: str) -> Mapping[str, str]:
    """Each tag of `repository` at `base_url` and the digest it names."""
    with requests.Session() as session:
        session.trust_env = False
        listed = session.get(f"{base_url}/v2/{repository}/tags/list", timeout=30)
        if listed.status_code == 404:
            return {}
        listed.raise_for_status()
        found = {}
        for tag in listed.json().get("tags") or []:
            head = session.head(f"{base_url}/v2/{repository}/manifests/{tag}", timeout=30,
                                headers={"Accept": f"{OCI_INDEX}, {OCI_MANIFEST}"})
            found[tag] = head.headers["Docker-Content-Digest"]
    return found


def main(arguments: Sequence[str]) -> int:
    """`python -m testing.copying LOCKFILE TO SOURCE_URL CA_FILE HOME`: a copy run as its own process,
    for tests that kill it."""
    from pinguard.commands.copy import copy
    from pinguard.resolve.settings import OnlineSettings

    lockfile, to, source_url, ca_file, home = arguments
    settings = RegistrySettings(mirrors={SOURCE: source_url}, ca_file=ca_file, rates={SOURCE: PACED_AT},
                                env={"HOME": home}, timeout=120.0)
    return copy(Path(lockfile), to, OnlineSettings(settings, (), Path(home) / "cache"), stdout=sys.stdout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
