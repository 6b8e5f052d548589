"""What pinguard records of an image's provenance, per lock entry.

`Evidence` with empty lists is an answer ("looked at CHECKED_AT, none found"),
distinct from no `Evidence` at all ("nobody looked"). Standard library only:
the offline rules read it from the lockfile.
"""
from __future__ import annotations

from dataclasses import dataclass

# What an artifact is, by its artifactType (or, for the cosign tag scheme, its layers' media type).
COSIGN_SIGNATURE = "application/vnd.dev.cosign.simplesigning.v1+json"
COSIGN_ATTESTATION = "application/vnd.dsse.envelope.v1+json"
SIGSTORE_BUNDLE = "application/vnd.dev.sigstore.bundle.v0.3+json"
NOTATION_SIGNATURE = "application/vnd.cncf.notary.signature"
IN_TOTO = "application/vnd.in-toto+json"

# Why evidence recorded before it named its subjects (or the repository a cosign signature names) vouches for
# nothing, and how to record it again.
OUTDATED = ("recorded by an older pinguard, without the image each signature and SBOM is about or the repository "
            "a cosign signature names: run `pinguard lock --provenance` to look again")

SLSA_V02 = "https://slsa.dev/provenance/v0.2"
SLSA_V1 = "https://slsa.dev/provenance/v1"
SPDX = "https://spdx.dev/Document"
CYCLONEDX = "https://cyclonedx.org/bom"


@dataclass(frozen=True)
class Artifact:
    """One thing found that refers to a digest, with its manifest and layer blobs, every byte verified.

    `found_by`: "referrers" (OCI 1.1 API), "tag" (cosign's `sha256-HEX.sig` scheme or the
    referrers tag `sha256-HEX`), "index" (a BuildKit attestation manifest in the image index).
    """

    subject: str  # the digest it refers to: the index's, or one platform manifest's
    artifact_type: str
    manifest_digest: str
    annotations: dict[str, str]  # the manifest's
    layers: tuple[Layer, ...]
    found_by: str


@dataclass(frozen=True)
class Layer:
    media_type: str
    digest: str
    annotations: dict[str, str]
    data: bytes  # hashed to `digest` when fetched


@dataclass(frozen=True)
class Build:
    """SLSA provenance read from an in-toto statement."""

    predicate_type: str
    builder: str | None
    source: str | None  # the source repository (a URI), when the statement names one
    revision: str | None  # the source commit
    started: str | None
    finished: str | None
    statement_digest: str  # the digest of the statement (or DSSE envelope) bytes
    subject: str  # the digest the statement says it is about
    subject_matches: bool  # whether that is the manifest it was found for
    signed: bool = False  # inside a DSSE envelope whose signature a trusted cosign key verified
    problem: str | None = None  # why its DSSE envelope's signature did not verify; None: verified, or unsigned

    @property
    def failed(self) -> bool:
        """Signed, but not by a trusted key: never counts, even where unsigned provenance does."""
        return self.problem is not None


@dataclass(frozen=True)
class Signature:
    kind: str  # "cosign", "sigstore", "notation"
    identity: str | None  # key id (sha256 of the public key's DER), or the certificate's identity
    issuer: str | None  # the OIDC issuer (sigstore), the certificate's issuer (notation)
    verified: bool
    problem: str | None = None  # why it did not verify
    subject: str | None = None  # the digest it signs (the index's, or a platform manifest's); None: not recorded
    # The image a verified cosign signature says it signs (its payload's docker-reference), as written; "": it
    # names none. None: not recorded (an older pinguard), or a kind that binds a digest alone (sigstore, notation).
    reference: str | None = None


@dataclass(frozen=True)
class Sbom:
    predicate_type: str
    digest: str  # of the statement (or document) bytes
    packages: int
    subject: str | None = None  # the digest it describes (the index's, or a platform manifest's); None: not recorded


@dataclass(frozen=True)
class Evidence:
    """What was found for one locked image (its index and every platform manifest)."""

    checked_at: str  # RFC 3339, UTC
    builds: tuple[Build, ...] = ()
    signatures: tuple[Signature, ...] = ()
    sboms: tuple[Sbom, ...] = ()
    unread: str | None = None  # what the search left unread at its byte budget; None: nothing

    @property
    def outdated(self) -> bool:
        """Recorded before evidence named its subject, or a verified cosign signature the repository it names:
        it vouches for no image until looked for again."""
        return (any(s.subject is None or (s.kind == "cosign" and s.verified and s.reference is None)
                    for s in self.signatures)
                or any(s.subject is None for s in self.sboms))
