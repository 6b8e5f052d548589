from __future__ import annotations

import json

import pytest

from pinguard.errors import RegistryError
from pinguard.registry.manifest import (
    OCI_INDEX,
    ManifestBody,
    Platform,
    media_type_of,
    platforms_of,
    select_platforms,
    sha256_digest,
)

AMD = "sha256:" + "a" * 64
ARM = "sha256:" + "b" * 64
SOCI = "sha256:" + "c" * 64
ATTEST = "sha256:" + "d" * 64


def _index(*entries: dict[str, object]) -> ManifestBody:
    data = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": list(entries)}).encode()
    return ManifestBody(data, sha256_digest(data), OCI_INDEX)


def _entry(digest: str, platform: str | None, **extra: object) -> dict[str, object]:
    entry: dict[str, object] = {"mediaType": "application/vnd.oci.image.manifest.v1+json",
                                "digest": digest, "size": 100, **extra}
    if platform:
        os_name, arch, *variant = platform.split("/")
        entry["platform"] = {"os": os_name, "architecture": arch, **({"variant": variant[0]} if variant else {})}
    return entry


DLC_INDEX = _index(
    _entry(AMD, "linux/amd64", annotations={"com.amazon.soci.index-digest": SOCI}),
    _entry(SOCI, "linux/amd64", artifactType="application/vnd.amazon.soci.index.v1+json",
           annotations={"com.amazon.soci.image-manifest-digest": AMD}),
)
SOCI_WITHOUT_ARTIFACT_TYPE = _index(  # older SOCI tooling left artifactType out
    _entry(AMD, "linux/amd64"),
    _entry(SOCI, "linux/amd64", annotations={"com.amazon.soci.image-manifest-digest": AMD}),
)
BUILDX_INDEX = _index(
    _entry(AMD, "linux/amd64"),
    _entry(ARM, "linux/arm64/v8"),
    _entry(ATTEST, "unknown/unknown", annotations={"vnd.docker.reference.type": "attestation-manifest",
                                                   "vnd.docker.reference.digest": AMD}),
)


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (DLC_INDEX, {"linux/amd64": AMD}),
        (SOCI_WITHOUT_ARTIFACT_TYPE, {"linux/amd64": AMD}),
        (BUILDX_INDEX, {"linux/amd64": AMD, "linux/arm64/v8": ARM}),
    ],
)
def test_platforms_skip_artifacts(index: ManifestBody, expected: dict[str, str]) -> None:
    assert platforms_of(index) == expected


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        (["linux/amd64"], {"linux/amd64": AMD}),
        (["linux/arm64"], {"linux/arm64": ARM}),  # no variant asked: any variant matches
        (["linux/arm64/v8", "linux/amd64"], {"linux/arm64/v8": ARM, "linux/amd64": AMD}),
    ],
)
def test_select_platforms(wanted: list[str], expected: dict[str, str]) -> None:
    assert select_platforms(BUILDX_INDEX, [Platform.parse(w) for w in wanted]) == expected


def test_select_missing_platform_names_what_is_offered() -> None:
    with pytest.raises(RegistryError, match=r"no linux/arm64 image \(it offers: linux/amd64\)"):
        select_platforms(DLC_INDEX, [Platform.parse("linux/arm64")])


@pytest.mark.parametrize("text", ["linux", "linux/", "/amd64", "a/b/c/d"])
def test_platform_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="invalid platform"):
        Platform.parse(text)


def test_media_type_prefers_the_body() -> None:
    body = b'{"mediaType": "application/vnd.oci.image.manifest.v1+json"}'
    assert media_type_of(body, "text/plain") == "application/vnd.oci.image.manifest.v1+json"
    assert media_type_of(b'{"schemaVersion": 2}', "application/x; charset=utf-8") == "application/x"


@pytest.mark.parametrize("data", [b"not json", b"[1]", b'{"manifests": [{"digest": 1}]}'])
def test_malformed_index_is_a_registry_error(data: bytes) -> None:
    with pytest.raises(RegistryError):
        ManifestBody(data, sha256_digest(data), OCI_INDEX).descriptors()
