"""Tiny but real OCI and Docker images, built in memory.

Everything here is deterministic: the same arguments always give the same
bytes and therefore the same digests (for a given zlib), so tests compute
expected digests from these builders instead of hard-coding them.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
OCI_EMPTY = "application/vnd.oci.empty.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER_GZIP = "application/vnd.docker.image.rootfs.diff.tar.gzip"
SOCI_INDEX_ARTIFACT = "application/vnd.amazon.soci.index.v1+json"
IN_TOTO = "application/vnd.in-toto+json"

MANIFEST_MEDIA_TYPES = (OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_MANIFEST_LIST)


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _dumps(document: Mapping[str, Any]) -> bytes:
    # indent=3 is what the Docker CLI emits; any stable form works because the
    # pushed bytes are kept and never re-serialised.
    return json.dumps(document, indent=3).encode()


@dataclass(frozen=True)
class Blob:
    """A content-addressed blob (config or layer)."""

    media_type: str
    data: bytes

    @property
    def digest(self) -> str:
        return _sha256(self.data)

    def descriptor(self, annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
        """OCI descriptor pointing at this blob."""
        desc: dict[str, Any] = {
            "mediaType": self.media_type,
            "digest": self.digest,
            "size": len(self.data),
        }
        if annotations:
            desc["annotations"] = dict(annotations)
        return desc


@dataclass(frozen=True)
class Manifest:
    """Anything PUT to /manifests/: image manifest, index, manifest list or artifact."""

    media_type: str
    data: bytes
    blobs: tuple[Blob, ...] = ()
    children: tuple[Manifest, ...] = ()

    @property
    def digest(self) -> str:
        return _sha256(self.data)

    @property
    def document(self) -> dict[str, Any]:
        """The parsed JSON, for reading fields back in tests."""
        parsed: dict[str, Any] = json.loads(self.data)
        return parsed

    @property
    def artifact_type(self) -> str | None:
        value = self.document.get("artifactType")
        return value if isinstance(value, str) else None

    def descriptor(self) -> dict[str, Any]:
        """OCI descriptor pointing at this manifest."""
        return {"mediaType": self.media_type, "digest": self.digest, "size": len(self.data)}

    def platform(self) -> dict[str, str]:
        """Platform of an image manifest, read back from its config blob."""
        config_digest = self.document["config"]["digest"]
        config = next(b for b in self.blobs if b.digest == config_digest)
        fields = json.loads(config.data)
        result = {"architecture": fields["architecture"], "os": fields["os"]}
        if fields.get("variant"):
            result["variant"] = fields["variant"]
        return result


def parse_platform(spec: str) -> dict[str, str]:
    """Turn "linux/arm64/v8" into an OCI platform object."""
    parts = spec.split("/")
    if len(parts) not in (2, 3):
        raise ValueError(f"platform must be os/arch[/variant], got {spec!r}")
    result = {"architecture": parts[1], "os": parts[0]}
    if len(parts) == 3:
        result["variant"] = parts[2]
    return result


def _layer(seed: str, number: int, media_type: str) -> tuple[Blob, str]:
    """A gzip tar layer with one small seed-dependent file; returns (blob, diff_id)."""
    content = f"pinguard test layer {number} for {seed}\n".encode()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo(f"etc/pinguard/layer-{number}.txt")
        info.size = len(content)
        info.mode = 0o644
        info.mtime = 0
        tar.addfile(info, io.BytesIO(content))
    tar_bytes = raw.getvalue()
    # mtime=0 keeps the gzip header, and therefore the digest, reproducible.
    return Blob(media_type, gzip.compress(tar_bytes, mtime=0)), _sha256(tar_bytes)


def image(
    *,
    os: str = "linux",
    arch: str = "amd64",
    variant: str | None = None,
    seed: str,
    created: str = "2026-11-01T00:00:00Z",
    labels: Mapping[str, str] | None = None,
    layers: int = 1,
    docker: bool = False,
) -> Manifest:
    """An OCI image manifest (Docker v2 schema 2 when docker=True) with real blobs."""
    layer_type = DOCKER_LAYER_GZIP if docker else OCI_LAYER_GZIP
    built = [_layer(seed, n, layer_type) for n in range(layers)]
    config_doc: dict[str, Any] = {"architecture": arch, "os": os}
    if variant:
        config_doc["variant"] = variant
    config_doc["created"] = created
    config_doc["config"] = {
        "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
        "Labels": dict(labels or {}),
    }
    config_doc["rootfs"] = {"type": "layers", "diff_ids": [diff_id for _, diff_id in built]}
    config_doc["history"] = [
        {"created": created, "created_by": f"COPY layer-{n}.txt /etc/pinguard/ # {seed}"}
        for n in range(layers)
    ]
    config = Blob(DOCKER_CONFIG if docker else OCI_CONFIG, _dumps(config_doc))
    media_type = DOCKER_MANIFEST if docker else OCI_MANIFEST
    document = {
        "schemaVersion": 2,
        "mediaType": media_type,
        "config": config.descriptor(),
        "layers": [blob.descriptor() for blob, _ in built],
    }
    return Manifest(media_type, _dumps(document), (config, *(blob for blob, _ in built)))


def index(
    entries: Sequence[tuple[Manifest, Mapping[str, object] | None, Mapping[str, str] | None]],
    *,
    docker: bool = False,
) -> Manifest:
    """An OCI image index (Docker manifest list when docker=True).

    Each entry is (child, platform or None, annotations or None).
    """
    media_type = DOCKER_MANIFEST_LIST if docker else OCI_INDEX
    descriptors = []
    for child, platform, notes in entries:
        if docker and platform is None:
            raise ValueError("every Docker manifest list entry needs a platform")
        desc = child.descriptor()
        if child.artifact_type:
            desc["artifactType"] = child.artifact_type
        if platform is not None:
            desc["platform"] = dict(platform)
        if notes:
            desc["annotations"] = dict(notes)
        descriptors.append(desc)
    document = {"schemaVersion": 2, "mediaType": media_type, "manifests": descriptors}
    return Manifest(media_type, _dumps(document), (), tuple(child for child, _, _ in entries))


def multi_platform(
    seed: str,
    platforms: Sequence[str] = ("linux/amd64", "linux/arm64"),
    *,
    docker: bool = False,
    **kw: Any,
) -> Manifest:
    """An index with one image per "os/arch[/variant]"; kw goes to image()."""
    entries: list[tuple[Manifest, Mapping[str, object] | None, Mapping[str, str] | None]] = []
    for spec in platforms:
        platform = parse_platform(spec)
        child = image(
            os=platform["os"],
            arch=platform["architecture"],
            variant=platform.get("variant"),
            seed=f"{seed}@{spec}",
            docker=docker,
            **kw,
        )
        entries.append((child, platform, None))
    return index(entries, docker=docker)


EMPTY_CONFIG = Blob(OCI_EMPTY, b"{}")


def soci_index_for(img: Manifest) -> Manifest:
    """A SOCI index artifact for img: empty config, one ztoc per layer, subject = img."""
    ztocs: list[Blob] = []
    layer_descriptors = []
    for layer in img.document["layers"]:
        ztoc = Blob("application/octet-stream", f"ztoc for {layer['digest']}\n".encode())
        ztocs.append(ztoc)
        layer_descriptors.append(
            ztoc.descriptor(
                {
                    "com.amazon.soci.image-layer-digest": layer["digest"],
                    "com.amazon.soci.image-layer-mediatype": layer["mediaType"],
                    "com.amazon.soci.size": str(len(ztoc.data)),
                    "com.amazon.soci.span-size": "4194304",
                }
            )
        )
    document = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": SOCI_INDEX_ARTIFACT,
        "config": EMPTY_CONFIG.descriptor(),
        "layers": layer_descriptors,
        "subject": img.descriptor(),
        "annotations": {"com.amazon.soci.build-tool-identifier": "AWS SOCI CLI v0.9.0"},
    }
    return Manifest(OCI_MANIFEST, _dumps(document), (EMPTY_CONFIG, *ztocs))


def with_soci(img: Manifest) -> Manifest:
    """An index holding img and its SOCI index, the way AWS DLC tags are published."""
    soci = soci_index_for(img)
    platform = img.platform()
    return index(
        [
            (img, platform, {"com.amazon.soci.index-digest": soci.digest}),
            (soci, platform, {"com.amazon.soci.image-manifest-digest": img.digest}),
        ]
    )


def attestation_for(img: Manifest) -> Manifest:
    """A buildx-style provenance attestation manifest describing img."""
    statement: dict[str, Any] = {
        "_type": "https://in-toto.io/Statement/v0.1",
        "predicateType": "https://slsa.dev/provenance/v0.2",
        "subject": [{"name": "_", "digest": {"sha256": img.digest.removeprefix("sha256:")}}],
        "predicate": {"builder": {"id": ""}, "buildType": "https://mobyproject.org/buildkit@v1"},
    }
    layer = Blob(IN_TOTO, _dumps(statement))
    config = Blob(
        OCI_CONFIG,
        _dumps(
            {
                "architecture": "unknown",
                "os": "unknown",
                "config": {},
                "rootfs": {"type": "layers", "diff_ids": [layer.digest]},
            }
        ),
    )
    document = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": config.descriptor(),
        "layers": [layer.descriptor({"in-toto.io/predicate-type": statement["predicateType"]})],
    }
    return Manifest(OCI_MANIFEST, _dumps(document), (config, layer))


def with_attestation(img: Manifest) -> Manifest:
    """An index like `docker buildx build --provenance` makes: img plus its attestation."""
    return index(
        [
            (img, img.platform(), None),
            (
                attestation_for(img),
                {"architecture": "unknown", "os": "unknown"},
                {
                    "vnd.docker.reference.digest": img.digest,
                    "vnd.docker.reference.type": "attestation-manifest",
                },
            ),
        ]
    )
