"""Verifying cosign key-based and Notation signatures, and opening DSSE envelopes, over bytes already fetched.

Every input is hostile until checked: a signature that cannot be read, does not verify,
or signs another image comes back as a `Signature` with `verified=False` and the reason,
never as an exception. Only a trust file that cannot be used (the user's to fix) raises.
"""
from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import ExtendedKeyUsageOID

from pinguard.errors import PinguardError
from pinguard.provenance.model import COSIGN_SIGNATURE, NOTATION_SIGNATURE, Artifact, Layer, Signature, Trust
from pinguard.reference import is_digest

COSIGN_ANNOTATION = "dev.cosignproject.cosign/signature"
NOTATION_JWS = "application/jose+json"
NOTATION_COSE = "application/cose"
MAX_SIGNATURE_BYTES = 1 << 20  # a signed payload or a JWS envelope with its chain is a few kilobytes

CosignKey = ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | rsa.RSAPublicKey

_COSIGN_TYPE = "cosign container image signature"
_NOTATION_PAYLOAD = "application/vnd.cncf.notary.payload.v1+json"
_SCHEME = "io.cncf.notary.signingScheme"
_SIGNING_TIME = "io.cncf.notary.signingTime"
_AUTHENTIC_TIME = "io.cncf.notary.authenticSigningTime"
_EXPIRY = "io.cncf.notary.expiry"
_PLUGIN = "io.cncf.notary.verificationPlugin"
_PLUGIN_VERSION = "io.cncf.notary.verificationPluginMinVersion"
_UNDERSTOOD = frozenset({_SCHEME, _AUTHENTIC_TIME, _EXPIRY})
_MUST_BE_CRITICAL = (_SCHEME, _AUTHENTIC_TIME, _EXPIRY, _PLUGIN, _PLUGIN_VERSION)
_MAX_CHAIN = 10
# The key decides the algorithm (Notary signature spec, "Algorithm Selection"); `alg` must agree.
_RSA_ALGORITHMS = {2048: "PS256", 3072: "PS384", 4096: "PS512"}
_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_HASHES: dict[str, hashes.HashAlgorithm] = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}
# A signing certificate may name code signing, and nothing that would let it act for a server, mail or a TSA.
_FORBIDDEN_USAGES = frozenset({
    ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE, ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH,
    ExtendedKeyUsageOID.EMAIL_PROTECTION, ExtendedKeyUsageOID.TIME_STAMPING, ExtendedKeyUsageOID.OCSP_SIGNING,
})


_E = TypeVar("_E", bound=x509.ExtensionType)


class Unreadable(Exception):
    """Bytes that are not the document they are labelled as; the text says why."""


class _Unverified(Exception):
    """Why a readable signature does not verify."""


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
            signatures.append(_notation(layer, subject_digest, _anchors(trust), moment))
        elif artifact.artifact_type == NOTATION_SIGNATURE and layer.media_type == NOTATION_COSE:
            signatures.append(Signature("notation", None, None, False, "COSE envelopes are not supported"))
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
        _check_size(layer.data)
        signature = base64_bytes(layer.annotations.get(COSIGN_ANNOTATION, ""), "the signature annotation")
        signer = _cosign_signer(keys, signature, layer.data)
        payload = load_json(layer.data, "the signed payload")
        if member(payload, "critical", "type") != _COSIGN_TYPE:
            raise _Unverified("the signed payload is not a cosign container image signature")
        _check_signs(member(payload, "critical", "image", "docker-manifest-digest"), subject)
    except (Unreadable, _Unverified) as why:
        return Signature("cosign", signer, None, False, str(why))
    return Signature("cosign", signer, None, True)


def _cosign_signer(keys: dict[str, CosignKey], signature: bytes, data: bytes) -> str:
    if not signature:
        raise _Unverified("the layer carries no signature")
    if not keys:
        raise _Unverified("no cosign key was given to verify it with")
    signer = signed_by(keys, signature, data)
    if signer is None:
        raise _Unverified(f"none of the {len(keys)} trusted cosign keys verifies it")
    return signer


def _check_signs(claimed: object, subject: str) -> None:
    if claimed == subject:
        return
    if isinstance(claimed, str) and is_digest(claimed):
        raise _Unverified(f"signs {claimed}, not this image")
    raise _Unverified("the signed payload names no image digest")


# --- DSSE -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dsse:
    """An opened DSSE envelope."""

    payload_type: str
    payload: bytes
    signer: str | None  # the id of the trusted cosign key whose signature verified, if any


def open_dsse(data: bytes, trust: Trust) -> Dsse:
    """A DSSE envelope's payload, and which trusted cosign key signed it; raises `Unreadable`."""
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
    return Dsse(payload_type, payload, None)


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what the envelope's signatures sign."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


def _is_url_safe(text: str) -> bool:
    # DSSE allows either alphabet; only the URL-safe one has these.
    return "-" in text or "_" in text


# --- Notation ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Jws:
    protected: dict[str, object]
    chain: tuple[x509.Certificate, ...]
    payload: bytes
    signing_input: bytes
    signature: bytes


def _anchors(trust: Trust) -> frozenset[bytes]:
    """The DER of every trusted Notation certificate: a chain is trusted when it holds one of them."""
    anchors: set[bytes] = set()
    for path in trust.notation_certs:
        try:
            certificates = x509.load_pem_x509_certificates(path.read_bytes())
        except (OSError, ValueError) as error:
            raise PinguardError(f"Notation certificate {path}: not a readable PEM certificate ({error})") from error
        anchors.update(c.public_bytes(serialization.Encoding.DER) for c in certificates)
    return frozenset(anchors)


def _notation(layer: Layer, subject: str, anchors: frozenset[bytes], now: datetime) -> Signature:
    leaf = None
    try:
        _check_size(layer.data)
        jws = _read_jws(layer.data)
        leaf = jws.chain[0]
        _check_jws_signature(jws, leaf)
        times = _validity_times(jws.protected, now)
        _check_signs(member(load_json(jws.payload, "the JWS payload"), "targetArtifact", "digest"), subject)
        _check_chain(jws.chain)
        if not any(c.public_bytes(serialization.Encoding.DER) in anchors for c in jws.chain):
            raise _Unverified("no certificate of its chain is a trusted Notation certificate")
        for certificate in jws.chain:
            for moment in times:
                _check_valid(certificate, moment)
    except (Unreadable, _Unverified) as why:
        return _notation_signature(leaf, str(why))
    return _notation_signature(leaf, None)


def _notation_signature(leaf: x509.Certificate | None, problem: str | None) -> Signature:
    identity = _name(leaf.subject) if leaf else None
    issuer = _name(leaf.issuer) if leaf else None
    return Signature("notation", identity, issuer, problem is None, problem)


def _read_jws(data: bytes) -> _Jws:
    envelope = load_json(data, "the JWS envelope")
    protected, payload, signature = (member(envelope, key) for key in ("protected", "payload", "signature"))
    if not (isinstance(protected, str) and isinstance(payload, str) and isinstance(signature, str)):
        raise Unreadable("not a flattened JWS envelope")
    header = load_json(base64_bytes(protected, "the protected header", url=True), "the protected header")
    if not isinstance(header, dict):
        raise Unreadable("the protected header is not an object")
    return _Jws(
        header,
        _chain(member(envelope, "header", "x5c")),
        base64_bytes(payload, "the JWS payload", url=True),
        f"{protected}.{payload}".encode(),
        base64_bytes(signature, "the JWS signature", url=True),
    )


def _chain(x5c: object) -> tuple[x509.Certificate, ...]:
    if not isinstance(x5c, list) or not 0 < len(x5c) <= _MAX_CHAIN:
        raise Unreadable(f"the unprotected header's x5c is not a list of 1 to {_MAX_CHAIN} certificates")
    try:
        return tuple(x509.load_der_x509_certificate(base64_bytes(text, "an x5c certificate")) for text in x5c)
    except ValueError as error:
        raise Unreadable(f"an x5c certificate is not DER: {error}") from error


def _check_jws_signature(jws: _Jws, leaf: x509.Certificate) -> None:
    key = _public_key(leaf)
    algorithm = (_RSA_ALGORITHMS.get(key.key_size) if isinstance(key, rsa.RSAPublicKey)
                 else _EC_ALGORITHMS.get(key.curve.name))
    if algorithm is None:
        raise _Unverified("the signing certificate's key is not a size Notation signs with")
    if jws.protected.get("alg") != algorithm:
        raise _Unverified(f"its alg header does not match the signing key, which signs {algorithm}")
    digest = _HASHES[algorithm[2:]]
    try:
        if isinstance(key, rsa.RSAPublicKey):
            key.verify(jws.signature, jws.signing_input, padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
        else:
            key.verify(_der_signature(jws.signature, key), jws.signing_input, ec.ECDSA(digest))
    except InvalidSignature:
        raise _Unverified("the signature does not match its payload and headers") from None


def _der_signature(raw: bytes, key: ec.EllipticCurvePublicKey) -> bytes:
    """JWS writes ECDSA signatures as R then S, each the curve's size; cryptography reads DER."""
    size = (key.curve.key_size + 7) // 8
    if len(raw) != 2 * size:
        raise _Unverified("the signature does not match its payload and headers")
    return encode_dss_signature(int.from_bytes(raw[:size]), int.from_bytes(raw[size:]))


def _validity_times(protected: dict[str, object], now: datetime) -> tuple[datetime, ...]:
    """When the chain must be valid: at signing, and now too unless the signing time is authentic."""
    if protected.get("cty") != _NOTATION_PAYLOAD:
        raise _Unverified(f"its payload is not {_NOTATION_PAYLOAD}")
    _check_critical(protected)
    expiry = protected.get(_EXPIRY)
    if expiry is not None and _time(expiry, _EXPIRY) <= now:
        raise _Unverified(f"the signature expired at {expiry}")
    scheme = protected.get(_SCHEME)
    if scheme == "notary.x509":
        return _time(protected.get(_SIGNING_TIME), _SIGNING_TIME), now
    if scheme == "notary.x509.signingAuthority":
        return (_time(protected.get(_AUTHENTIC_TIME), _AUTHENTIC_TIME),)
    raise _Unverified("its signing scheme is neither notary.x509 nor notary.x509.signingAuthority")


def _check_critical(protected: dict[str, object]) -> None:
    crit = protected.get("crit")
    if not isinstance(crit, list) or not all(isinstance(name, str) for name in crit):
        raise Unreadable("the protected header's crit is not a list of names")
    if _PLUGIN in crit:
        raise _Unverified("it needs a Notation verification plugin, which pinguard does not run")
    if any(name not in _UNDERSTOOD for name in crit):
        raise _Unverified("it has a critical header pinguard does not understand")
    if any(name not in protected for name in crit):
        raise _Unverified("it marks as critical a header it does not carry")
    if any(name in protected and name not in crit for name in _MUST_BE_CRITICAL):
        raise _Unverified("it carries a header that must be critical without marking it so")


def _time(value: object, what: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise Unreadable(f"{what} is not an RFC 3339 time")
    return moment


def _check_chain(chain: Sequence[x509.Certificate]) -> None:
    """The Notary certificate requirements; the chain runs from the signing certificate to a self-signed root."""
    for certificate in chain:
        _check_key_strength(certificate)
    _check_leaf(chain[0])
    for below, certificate in enumerate(chain[1:]):
        _check_ca(certificate, below)
    for child, issuer in zip(chain, [*chain[1:], chain[-1]], strict=True):
        _check_issued(child, issuer)


def _check_key_strength(certificate: x509.Certificate) -> None:
    key = _public_key(certificate)
    if key.key_size < (2048 if isinstance(key, rsa.RSAPublicKey) else 256):
        raise _Unverified(f"certificate {_name(certificate.subject)} has a key too short for Notation")


def _check_leaf(leaf: x509.Certificate) -> None:
    constraints = _extension(leaf, x509.BasicConstraints)
    if constraints and constraints.value.ca:
        raise _Unverified("the signing certificate is a CA")
    usage = _extension(leaf, x509.KeyUsage)
    if usage is None or not usage.critical or not usage.value.digital_signature:
        raise _Unverified("the signing certificate's key usage is not marked critical for digital signatures")
    allowed = usage.value
    if any((allowed.key_encipherment, allowed.data_encipherment, allowed.key_agreement, allowed.key_cert_sign,
            allowed.crl_sign)):
        raise _Unverified("the signing certificate's key usage allows more than signing")
    purposes = _extension(leaf, x509.ExtendedKeyUsage)
    if purposes and _FORBIDDEN_USAGES.intersection(purposes.value):
        raise _Unverified("the signing certificate's extended key usage is not for code signing")


def _check_ca(certificate: x509.Certificate, below: int) -> None:
    """A CA with `below` intermediate CAs under it in the chain."""
    name = _name(certificate.subject)
    constraints = _extension(certificate, x509.BasicConstraints)
    if constraints is None or not constraints.critical or not constraints.value.ca:
        raise _Unverified(f"certificate {name} issues certificates but has no critical CA basic constraints")
    limit = constraints.value.path_length
    if limit is not None and limit < below:
        raise _Unverified(f"certificate {name} allows {limit} intermediate CAs below it, the chain has {below}")
    usage = _extension(certificate, x509.KeyUsage)
    if usage is None or not usage.critical or not usage.value.key_cert_sign:
        raise _Unverified(f"certificate {name} issues certificates but its key usage does not allow it")


def _check_issued(child: x509.Certificate, issuer: x509.Certificate) -> None:
    try:
        child.verify_directly_issued_by(issuer)  # which refuses SHA-1 signatures, as Notary requires
    except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        what = ("is not self-signed, so the chain has no root" if child is issuer
                else f"is not issued by {_name(issuer.subject)}")
        raise _Unverified(f"certificate {_name(child.subject)} {what}") from None


def _check_valid(certificate: x509.Certificate, moment: datetime) -> None:
    start, end = certificate.not_valid_before_utc, certificate.not_valid_after_utc
    if not start <= moment <= end:
        raise _Unverified(f"certificate {_name(certificate.subject)} is valid from {start:%Y-%m-%dT%H:%M:%SZ} "
                          f"to {end:%Y-%m-%dT%H:%M:%SZ}, not at {moment.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}")


def _public_key(certificate: x509.Certificate) -> rsa.RSAPublicKey | ec.EllipticCurvePublicKey:
    try:
        key = certificate.public_key()
    except (ValueError, UnsupportedAlgorithm):
        key = None
    if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
        raise _Unverified(f"certificate {_name(certificate.subject)} has neither an RSA nor an EC key")
    return key


def _extension(certificate: x509.Certificate, kind: type[_E]) -> x509.Extension[_E] | None:
    try:
        return certificate.extensions.get_extension_for_class(kind)
    except x509.ExtensionNotFound:
        return None
    except ValueError as error:
        raise Unreadable(f"certificate {_name(certificate.subject)} has malformed extensions: {error}") from error


def _name(name: x509.Name) -> str:
    """The name as RFC 4514 writes it, with anything unprintable escaped: it goes into reports and the lock."""
    try:
        text = name.rfc4514_string()
    except ValueError:
        return "(unreadable name)"
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


# --- reading hostile bytes --------------------------------------------------------------------------


def load_json(data: bytes, what: str) -> object:
    """`data` read as UTF-8 JSON; raises `Unreadable` naming `what`."""
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise Unreadable(f"{what} is nested too deeply") from None
    except ValueError as error:
        raise Unreadable(f"{what} is not JSON: {error}") from None


def member(value: object, *keys: str) -> object:
    """`value[key1][key2]...`, or None where an object or key is missing."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def base64_bytes(text: object, what: str, *, url: bool = False) -> bytes:
    """Standard (or, with `url`, URL-safe) base64, padding optional; raises `Unreadable` naming `what`."""
    if not isinstance(text, str):
        raise Unreadable(f"{what} is not a string")
    if url and ("+" in text or "/" in text):
        raise Unreadable(f"{what} is not base64url")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_" if url else None, validate=True)
    except ValueError:
        raise Unreadable(f"{what} is not base64") from None


def _check_size(data: bytes) -> None:
    if len(data) > MAX_SIGNATURE_BYTES:
        raise Unreadable(f"{len(data)} bytes is more than a signature layer may hold ({MAX_SIGNATURE_BYTES})")
