"""Verifying signatures over bytes already fetched: cosign key-based ones here, Notation's in
`notation`; and opening DSSE envelopes.

Every input is hostile until checked: a signature that cannot be read, does not verify,
or signs another image comes back as a `Signature` with `verified=False` and the reason,
never as an exception. Only a trust file that cannot be used (the user's to fix) raises.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

from pinguard.errors import InvalidReference, PinguardError
from pinguard.provenance.evidence import COSIGN_SIGNATURE, NOTATION_SIGNATURE, Artifact, Layer, Signature
from pinguard.provenance.notation import NOTATION_COSE, NOTATION_JWS, anchors, verify_notation
from pinguard.provenance.payloads import (
    Unreadable,
    Unverified,
    base64_bytes,
    check_signs,
    check_size,
    load_json,
    member,
)
from pinguard.provenance.trust import Trust
from pinguard.reference import parse

COSIGN_ANNOTATION = "dev.cosignproject.cosign/signature"

CosignKey = ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | rsa.RSAPublicKey

_COSIGN_TYPE = "cosign container image signature"


def verify(artifact: Artifact, subject_digest: str, trust: Trust, now: datetime | None = None) -> list[Signature]:
    """One `Signature` per cosign or Notation signature layer of `artifact`, checked against `subject_digest`.

    `now` (default: the current time) decides whether Notation certificates and expiries still hold.
    Layers of other kinds (attestations, Sigstore bundles, SBOMs) are not signatures here.
    """
    moment = now or datetime.now(UTC)
    signatures: list[Signature] = []
    for layer in artifact.layers:
        if layer.media_type == COSIGN_SIGNATURE:
            signatures.append(_cosign(layer, subject_digest, cosign_keys(trust)))
        elif artifact.artifact_type == NOTATION_SIGNATURE and layer.media_type == NOTATION_JWS:
            signatures.append(verify_notation(layer, subject_digest, anchors(trust), moment))
        elif artifact.artifact_type == NOTATION_SIGNATURE and layer.media_type == NOTATION_COSE:
            signatures.append(Signature("notation", None, None, False, "COSE envelopes are not supported",
                                        subject_digest))
    return signatures


# --- cosign -----------------------------------------------------------------------------------------


def cosign_keys(trust: Trust) -> dict[str, CosignKey]:
    """The trusted cosign public keys, by key id."""
    return dict(_cosign_key(path) for path in trust.keys)


def key_id(key: CosignKey) -> str:
    """`sha256:` and the hex SHA-256 of the key's SubjectPublicKeyInfo DER."""
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(der).hexdigest()


def signed_by(keys: dict[str, CosignKey], signature: bytes, data: bytes) -> str | None:
    """The id of the first key for which `signature` signs `data` the way cosign signs, or None."""
    return next((kid for kid, key in keys.items() if _cosign_verifies(key, signature, data)), None)


def _cosign_key(path: Path) -> tuple[str, CosignKey]:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except (OSError, ValueError, UnsupportedAlgorithm) as error:
        raise PinguardError(f"cosign key {path}: not a readable PEM public key ({error})") from error
    if not isinstance(key, CosignKey):
        raise PinguardError(f"cosign key {path}: only ECDSA, Ed25519 and RSA keys are supported")
    return key_id(key), key


def _cosign_verifies(key: CosignKey, signature: bytes, data: bytes) -> bool:
    # cosign hashes with SHA-256 whatever the key; RSA keys given as PEM verify PKCS#1 v1.5 (never PSS).
    try:
        if isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, data, ec.ECDSA(hashes.SHA256()))
        elif isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, data)
        else:
            key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def _cosign(layer: Layer, subject: str, keys: dict[str, CosignKey]) -> Signature:
    signer = None
    try:
        check_size(layer.data)
        signature = base64_bytes(layer.annotations.get(COSIGN_ANNOTATION, ""), "the signature annotation")
        signer = _cosign_signer(keys, signature, layer.data)
        payload = load_json(layer.data, "the signed payload")
        if member(payload, "critical", "type") != _COSIGN_TYPE:
            raise Unverified("the signed payload is not a cosign container image signature")
        check_signs(member(payload, "critical", "image", "docker-manifest-digest"), subject)
        reference = _docker_reference(member(payload, "critical", "identity", "docker-reference"))
    except (Unreadable, Unverified) as why:
        return Signature("cosign", signer, None, False, str(why), subject)
    return Signature("cosign", signer, None, True, subject=subject, reference=reference)


def _docker_reference(claimed: object) -> str:
    """The image the payload says it signs, as written ("": none named); judged against the lock by the
    `require-signature` rule, which knows the repository and its copies."""
    if claimed is None or claimed == "":
        return ""
    try:
        if isinstance(claimed, str) and parse(claimed):
            return claimed
    except InvalidReference:
        pass
    raise Unverified("the signed payload's docker-reference is not an image reference")


def _cosign_signer(keys: dict[str, CosignKey], signature: bytes, data: bytes) -> str:
    if not signature:
        raise Unverified("the layer carries no signature")
    if not keys:
        raise Unverified("no cosign key was given to verify it with")
    signer = signed_by(keys, signature, data)
    if signer is None:
        raise Unverified(f"none of the {len(keys)} trusted cosign keys verifies it")
    return signer


# --- DSSE -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dsse:
    """An opened DSSE envelope."""

    payload_type: str
    payload: bytes
    signer: str | None  # the id of the trusted cosign key whose signature verified, if any
    problem: str | None = None  # why none verified, when it carries signatures; None: signed, or unsigned


def open_dsse(data: bytes, trust: Trust) -> Dsse:
    """A DSSE envelope's payload, and which trusted cosign key signed it (or why none did); raises `Unreadable`."""
    envelope = load_json(data, "the DSSE envelope")
    payload_type = member(envelope, "payloadType")
    encoded = member(envelope, "payload")
    entries = member(envelope, "signatures")
    if not isinstance(payload_type, str) or not payload_type.isprintable() or not isinstance(entries, list):
        raise Unreadable("not a DSSE envelope")
    payload = base64_bytes(encoded, "the DSSE payload", url=isinstance(encoded, str) and _is_url_safe(encoded))
    signed = pae(payload_type, payload)
    keys = cosign_keys(trust)
    for entry in entries:
        sig = member(entry, "sig")
        if isinstance(sig, str):
            signer = signed_by(keys, base64_bytes(sig, "a DSSE signature", url=_is_url_safe(sig)), signed)
            if signer:
                return Dsse(payload_type, payload, signer)
    if not entries:
        return Dsse(payload_type, payload, None)
    if not keys:
        return Dsse(payload_type, payload, None, "no cosign key was given to verify its signature with")
    return Dsse(payload_type, payload, None, f"none of the {len(keys)} trusted cosign keys verifies its signature")


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what the envelope's signatures sign."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


def _is_url_safe(text: str) -> bool:
    # DSSE allows either alphabet; only the URL-safe one has these.
    return "-" in text or "_" in text
