"""Manifest media types and what pinguard reads out of manifest bodies."""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from pinguard import untrusted_json
from pinguard.errors import RegistryError
from pinguard.reference import is_digest

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"

_ARTIFACT_ANNOTATIONS = frozenset({"vnd.docker.reference.type", "com.amazon.soci.image-manifest-digest"})

INDEX_TYPES = frozenset({OCI_INDEX, DOCKER_LIST})
MANIFEST_TYPES = INDEX_TYPES | {OCI_MANIFEST, DOCKER_MANIFEST}  # what an image's digest can name

# How container runtimes read other spellings of an architecture, the variant some stand for, and
# the variants that are an architecture's baseline.
_ARCHITECTURES = {"x86_64": "amd64", "x86-64": "amd64", "aarch64": "arm64", "i386": "386", "armhf": "arm",
                  "armel": "arm"}
_IMPLIED_VARIANTS = {"i386": "", "armhf": "v7", "armel": "v6"}
_DEFAULT_VARIANTS = frozenset({("amd64", "v1"), ("arm64", "8"), ("arm64", "v8"), ("arm64", "v8.0")})

# Without an explicit Accept, registries fall back to old schemas or refuse
# (distribution 2.8 answers 404 for an index), so every manifest request sends all four.
ACCEPT = ", ".join((OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST))


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest_of(data: bytes, algorithm: str = "sha256") -> str:
    """Hash `data` with the algorithm a digest names; sha256 and sha512 are what registries use."""
    if algorithm not in ("sha256", "sha512"):
        raise RegistryError(f"unsupported digest algorithm {algorithm!r}")
    return f"{algorithm}:" + hashlib.new(algorithm, data).hexdigest()


@dataclass(frozen=True)
class Platform:
    os: str
    architecture: str
    variant: str | None = None

    @classmethod
    def parse(cls, text: str) -> Platform:
        parts = text.split("/")
        if len(parts) not in (2, 3) or not all(parts):
            raise ValueError(f"invalid platform {text!r}: expected OS/ARCH or OS/ARCH/VARIANT")
        return cls(*parts)

    def __str__(self) -> str:
        return "/".join(p for p in (self.os, self.architecture, self.variant) if p)

    def matches(self, other: Platform) -> bool:
        """A wanted platform without a variant matches any variant of its architecture."""
        return (
            self.os == other.os
            and self.architecture == other.architecture
            and (self.variant is None or self.variant == other.variant)
        )


@dataclass(frozen=True)
class Descriptor:
    media_type: str
    digest: str
    size: int
    platform: Platform | None
    artifact_type: str | None
    annotations: dict[str, str]

    @property
    def is_artifact(self) -> bool:
        """SOCI indexes, buildx attestations and other non-runnable entries of an index."""
        if self.artifact_type or self.platform is None:
            return True
        if self.platform.os == "unknown" or self.platform.architecture == "unknown":
            return True
        # The image entry of a DLC index carries com.amazon.soci.index-digest; only the
        # SOCI entry itself points back with image-manifest-digest.
        return any(key in _ARTIFACT_ANNOTATIONS for key in self.annotations)


@dataclass(frozen=True)
class ManifestBody:
    """A manifest exactly as served: the bytes, their digest and their media type."""

    data: bytes
    digest: str
    media_type: str

    @property
    def is_index(self) -> bool:
        return self.media_type in INDEX_TYPES

    def json(self) -> dict[str, object]:
        try:
            value = untrusted_json.loads(self.data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise RegistryError(f"manifest {self.digest} is not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise RegistryError(f"manifest {self.digest} is not a JSON object")
        return value

    def descriptors(self) -> list[Descriptor]:
        """The entries of an index or manifest list."""
        entries = self.json().get("manifests")
        if not isinstance(entries, list):
            raise RegistryError(f"index {self.digest} has no 'manifests' list")
        return [_descriptor(entry, self.digest) for entry in entries]


def media_type_of(data: bytes, header: str | None) -> str:
    """What the body is: the media type it declares, else what its fields say, else its Content-Type.

    A registry's Content-Type is only a claim about the body: an index served as an
    image manifest must still be read, and checked for its platforms, as an index.
    """
    served = (header or "").split(";")[0].strip()
    try:
        document = untrusted_json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return served
    if not isinstance(document, dict):
        return served
    declared = document.get("mediaType")
    if isinstance(declared, str) and declared:
        return declared
    if isinstance(document.get("manifests"), list):
        return served if served in INDEX_TYPES else OCI_INDEX
    if isinstance(document.get("config"), dict):
        return served if served in (OCI_MANIFEST, DOCKER_MANIFEST) else OCI_MANIFEST
    return served


def platforms_of(index: ManifestBody) -> dict[str, str]:
    """Every runnable platform of an index, mapped to its manifest digest."""
    return {str(d.platform): d.digest for d in _runnable(index)}


def select_platforms(index: ManifestBody, wanted: Iterable[Platform]) -> dict[str, str]:
    """The manifest digest for each wanted platform; a wanted platform missing is an error."""
    runnable = _runnable(index)
    chosen: dict[str, str] = {}
    for platform in wanted:
        match = next((d for d in runnable if d.platform and platform.matches(d.platform)), None)
        if match is None:
            offered = ", ".join(sorted({str(d.platform) for d in runnable})) or "none"
            raise RegistryError(f"index {index.digest} has no {platform} image (it offers: {offered})")
        chosen[str(platform)] = match.digest
    return chosen


def _runnable(index: ManifestBody) -> list[Descriptor]:
    """The entries of an index a runtime may pull: pinguard's one image for each platform.

    A runtime pulls the first entry for its platform, whatever its annotations say and however
    the platform is spelled (`x86_64` is `amd64`). An index where that is not the image pinguard
    records for the platform is refused: two images for one platform, or an entry marked as no
    image (an attestation, a SOCI index) before the platform's image, or with no image after it.
    """
    runnable = []
    first: dict[tuple[str, str, str], Descriptor] = {}
    for descriptor in index.descriptors():
        platform = descriptor.platform
        if platform is None or "unknown" in (platform.os, platform.architecture):
            continue  # what no runtime pulls: it has no platform to match
        pulled = first.setdefault(as_runtimes_match(platform), descriptor)
        if descriptor.is_artifact:
            continue
        if pulled.digest != descriptor.digest:
            raise RegistryError(f"index {index.digest} lists two images for {str(platform)[:80]!r}: "
                                f"{pulled.digest} and {descriptor.digest}; refusing to guess which one runs")
        runnable.append(descriptor)
    shadowing = [d for d in first.values() if d.is_artifact]
    if shadowing:
        raise RegistryError(f"index {index.digest} lists {shadowing[0].digest} for {str(shadowing[0].platform)[:80]!r} "
                            "as no image, yet first for that platform: a runtime would pull it")
    return runnable


def as_runtimes_match(platform: Platform) -> tuple[str, str, str]:
    """(os, architecture, variant) as container runtimes compare them (containerd's `platforms.Normalize`)."""
    os_name = platform.os.lower().replace("macos", "darwin")
    spelled = platform.architecture.lower()
    architecture = _ARCHITECTURES.get(spelled, spelled)
    variant = _IMPLIED_VARIANTS.get(spelled, (platform.variant or "").lower())
    if (architecture, variant) in _DEFAULT_VARIANTS:
        variant = ""
    if architecture == "arm" and variant in ("", "5", "6", "7", "8"):
        variant = f"v{variant or 7}"
    return os_name, architecture, variant


def _descriptor(entry: object, parent: str) -> Descriptor:
    if not isinstance(entry, dict):
        raise RegistryError(f"index {parent} has an entry that is not an object")
    try:
        platform_json = entry.get("platform")
        platform = None
        if isinstance(platform_json, dict):
            platform = Platform(
                str(platform_json["os"]),
                str(platform_json["architecture"]),
                platform_json.get("variant") or None,
            )
        annotations = entry.get("annotations") or {}
        if not is_digest(str(entry["digest"])):
            raise RegistryError(f"index {parent} has an entry whose digest is not valid: {str(entry['digest'])[:80]!r}")
        return Descriptor(
            media_type=str(entry["mediaType"]),
            digest=str(entry["digest"]),
            size=int(entry["size"]),
            platform=platform,
            artifact_type=entry.get("artifactType") or None,
            annotations={str(k): str(v) for k, v in annotations.items()},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RegistryError(f"index {parent} has a malformed entry: {exc!r}") from None
