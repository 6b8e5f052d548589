"""What signers and builders attach to images, built in memory like `testing.images`.

- BuildKit: attestation manifests inside the image index (`attested_index`), each
  carrying in-toto statements about one platform manifest;
- cosign's tag scheme: `.sig`, `.att` and `.sbom` manifests (`cosign_manifest`),
  pushed under `cosign_tag(digest, suffix)`;
- OCI 1.1 referrers: artifact manifests with `subject` and `artifactType`
  (`referrer`; `notation_signature`, `sigstore_bundle` and `cosign_referrer` for the
  usual ones), and the index of referrers the referrers tag holds when a registry
  has no referrers API (`referrers_index`, pushed under `referrers_tag(digest)`).

Layer bytes (statements, signatures, envelopes, bundles) are inputs: what they say,
and whether they verify, is the caller's business. `statement` makes a plain
unsigned in-toto statement for tests that only need one to exist.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from testing.fake_registry import referrer_descriptor
from testing.images import (
    EMPTY_CONFIG,
    IN_TOTO,
    OCI_CONFIG,
    OCI_INDEX,
    OCI_MANIFEST,
    Blob,
    Manifest,
    index,
    soci_index_for,
)

COSIGN_SIMPLESIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
DSSE_ENVELOPE = "application/vnd.dsse.envelope.v1+json"
NOTATION_SIGNATURE = "application/vnd.cncf.notary.signature"
JWS = "application/jose+json"
SIGSTORE_BUNDLE = "application/vnd.dev.sigstore.bundle.v0.3+json"
COSIGN_SIGNATURE_ARTIFACT = "application/vnd.dev.cosign.artifact.sig.v1+json"
SPDX_JSON = "text/spdx+json"
SLSA_PROVENANCE_V02 = "https://slsa.dev/provenance/v0.2"
SPDX_DOCUMENT = "https://spdx.dev/Document"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
PREDICATE_TYPE_ANNOTATION = "in-toto.io/predicate-type"
UNKNOWN_PLATFORM = {"architecture": "unknown", "os": "unknown"}


@dataclass(frozen=True)
class Payload:
    """One layer of an artifact: its bytes, their media type, the layer descriptor's annotations."""

    media_type: str
    data: bytes
    annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def blob(self) -> Blob:
        return Blob(self.media_type, self.data)


def _dumps(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, indent=3).encode()


def statement(subject_digest: str, predicate_type: str = SLSA_PROVENANCE_V02,
              predicate: Mapping[str, Any] | None = None) -> bytes:
    """An unsigned in-toto v1 statement about `subject_digest` ("sha256:HEX")."""
    algorithm, _, encoded = subject_digest.partition(":")
    document = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "_", "digest": {algorithm: encoded}}],
        "predicateType": predicate_type,
        "predicate": dict(predicate or {}),
    }
    return _dumps(document)


def in_toto(data: bytes, predicate_type: str = SLSA_PROVENANCE_V02) -> Payload:
    """A BuildKit attestation layer: an in-toto statement, its predicate type annotated."""
    return Payload(IN_TOTO, data, {PREDICATE_TYPE_ANNOTATION: predicate_type})


def _manifest(layers: Sequence[Payload], config: Blob, artifact_type: str | None = None,
              subject: Manifest | None = None, annotations: Mapping[str, str] | None = None) -> Manifest:
    document: dict[str, Any] = {"schemaVersion": 2, "mediaType": OCI_MANIFEST}
    if artifact_type:
        document["artifactType"] = artifact_type
    document["config"] = config.descriptor()
    document["layers"] = [layer.blob.descriptor(layer.annotations) for layer in layers]
    if subject is not None:
        document["subject"] = subject.descriptor()
    if annotations:
        document["annotations"] = dict(annotations)
    unique = {blob.digest: blob for blob in (config, *(layer.blob for layer in layers))}
    return Manifest(OCI_MANIFEST, _dumps(document), tuple(unique.values()))


def attestation_manifest(layers: Sequence[Payload]) -> Manifest:
    """A BuildKit attestation manifest: an `unknown/unknown` image whose layers are statements."""
    config = Blob(OCI_CONFIG, _dumps({
        **UNKNOWN_PLATFORM, "config": {},
        "rootfs": {"type": "layers", "diff_ids": [layer.blob.digest for layer in layers]},
    }))
    return _manifest(layers, config)


def attested_index(images: Sequence[tuple[Manifest, Sequence[Payload]]], *, soci: bool = False) -> Manifest:
    """An index as `docker buildx build --provenance` makes it: each image, then (when it has
    statements) its attestation manifest annotated with the image's digest; with `soci`,
    also each image's SOCI index, as AWS DLC indexes carry them."""
    entries: list[tuple[Manifest, Mapping[str, object] | None, Mapping[str, str] | None]] = []
    for image, statements in images:
        platform = image.platform()
        if soci:
            soci_index = soci_index_for(image)
            entries.append((image, platform, {"com.amazon.soci.index-digest": soci_index.digest}))
            entries.append((soci_index, platform, {"com.amazon.soci.image-manifest-digest": image.digest}))
        else:
            entries.append((image, platform, None))
        if statements:
            entries.append((attestation_manifest(statements), UNKNOWN_PLATFORM, {
                "vnd.docker.reference.digest": image.digest,
                "vnd.docker.reference.type": "attestation-manifest",
            }))
    return index(entries)


def cosign_tag(digest: str, suffix: str) -> str:
    """The tag cosign stores `.sig`, `.att` or `.sbom` for `digest` under: `sha256-HEX.sig`."""
    return digest.replace(":", "-") + suffix


def cosign_manifest(layers: Sequence[Payload]) -> Manifest:
    """A manifest of cosign's tag scheme: an image config and one layer per signature,
    attestation (`DSSE_ENVELOPE`) or SBOM; no subject, no artifactType."""
    config = Blob(OCI_CONFIG, _dumps({
        "architecture": "", "os": "", "config": {}, "created": "0001-01-01T00:00:00Z",
        "rootfs": {"type": "layers", "diff_ids": [layer.blob.digest for layer in layers]},
    }))
    return _manifest(layers, config)


def cosign_signature(payload: bytes, signature: str, annotations: Mapping[str, str] | None = None) -> Payload:
    """A cosign signature layer: the simple-signing payload, its base64 signature annotated."""
    return Payload(COSIGN_SIMPLESIGNING, payload, {SIGNATURE_ANNOTATION: signature, **(annotations or {})})


def referrer(subject: Manifest, artifact_type: str, layers: Sequence[Payload],
             annotations: Mapping[str, str] | None = None) -> Manifest:
    """An OCI 1.1 artifact manifest referring to `subject`: artifactType, the empty config."""
    return _manifest(layers, EMPTY_CONFIG, artifact_type, subject, annotations)


def notation_signature(subject: Manifest, envelope: bytes, annotations: Mapping[str, str] | None = None) -> Manifest:
    """A Notation signature: one JWS envelope layer."""
    notes = {"io.cncf.notary.x509chain.thumbprint#S256": '["' + "0" * 64 + '"]', **(annotations or {})}
    return referrer(subject, NOTATION_SIGNATURE, [Payload(JWS, envelope)], notes)


def sigstore_bundle(subject: Manifest, bundle: bytes, annotations: Mapping[str, str] | None = None) -> Manifest:
    """A Sigstore bundle as cosign's new bundle format attaches it."""
    notes = {
        "dev.sigstore.bundle.content": "message-signature",
        "dev.sigstore.bundle.predicateType": "https://sigstore.dev/cosign/sign/v1",
        **(annotations or {}),
    }
    return referrer(subject, SIGSTORE_BUNDLE, [Payload(SIGSTORE_BUNDLE, bundle)], notes)


def cosign_referrer(subject: Manifest, layers: Sequence[Payload]) -> Manifest:
    """cosign's signature in OCI 1.1 mode: its own artifactType, simple-signing layers."""
    return referrer(subject, COSIGN_SIGNATURE_ARTIFACT, layers)


def referrers_tag(digest: str) -> str:
    """The OCI referrers tag schema: `sha256-HEX` holds the index of `digest`'s referrers."""
    algorithm, _, encoded = digest.partition(":")
    return f"{algorithm[:32]}-{encoded[:64]}"


def referrers_index(referrers: Sequence[Manifest]) -> Manifest:
    """The index of referrers a registry answers with, or the referrers tag holds."""
    document = {
        "schemaVersion": 2,
        "mediaType": OCI_INDEX,
        "manifests": [referrer_descriptor(found.media_type, found.data) for found in referrers],
    }
    return Manifest(OCI_INDEX, _dumps(document), (), tuple(referrers))


def served(tagged: Mapping[str, Manifest], untagged: Iterable[Manifest] = ()) -> tuple[
        dict[str, tuple[str, bytes]], dict[str, bytes]]:
    """The manifests (by tag and by digest) and blobs of the trees given, for `serve_manifests`."""
    manifests: dict[str, tuple[str, bytes]] = {}
    blobs: dict[str, bytes] = {}

    def add(manifest: Manifest) -> None:
        manifests[manifest.digest] = (manifest.media_type, manifest.data)
        blobs.update((blob.digest, blob.data) for blob in manifest.blobs)
        for child in manifest.children:
            add(child)

    for tag, manifest in tagged.items():
        add(manifest)
        manifests[tag] = (manifest.media_type, manifest.data)
    for manifest in untagged:
        add(manifest)
    return manifests, blobs
