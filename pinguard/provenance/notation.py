"""Verifying Notation signatures: a JWS envelope, and its x509 chain up to a trusted certificate.

The Notary Project's signature specification decides: the signing key names the
algorithm, `cty` is the Notary payload, unknown critical headers fail, and the chain
ends in a trusted certificate with CA constraints, key usages and key sizes checked,
every certificate valid at the signing time (and now, for the `notary.x509` scheme).

Which certificates are trusted depends on the signing scheme (the Notary signing scheme spec,
"Trust Stores"): a `notary.x509` signature must chain to a CA (`provenance.notation-certs`), and
its signing time is only its signer's word, so every certificate must be valid now too; a
`notary.x509.signingAuthority` one must chain to a signing authority
(`provenance.notation-signing-authorities`), whose authentic signing time is taken, so an expired
certificate still verifies what it signed while it was valid. A CA's signer claiming that scheme
could backdate its signatures: it is refused, as Notation refuses it.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import ExtendedKeyUsageOID

from pinguard.errors import PinguardError
from pinguard.provenance.evidence import Layer, Signature
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

NOTATION_JWS = "application/jose+json"
NOTATION_COSE = "application/cose"

_NOTATION_PAYLOAD = "application/vnd.cncf.notary.payload.v1+json"
_SCHEME = "io.cncf.notary.signingScheme"
_X509 = "notary.x509"
_AUTHORITY = "notary.x509.signingAuthority"
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


@dataclass(frozen=True)
class _Jws:
    protected: dict[str, object]
    chain: tuple[x509.Certificate, ...]
    payload: bytes
    signing_input: bytes
    signature: bytes


def anchors(trust: Trust) -> dict[str, frozenset[bytes]]:
    """The DER of every certificate a chain may end in, by the signing scheme whose trust store holds it:
    a chain is trusted when it holds one of its scheme's."""
    return {_X509: _certificates(trust.notation_certs), _AUTHORITY: _certificates(trust.notation_authorities)}


def _certificates(paths: Sequence[Path]) -> frozenset[bytes]:
    found: set[bytes] = set()
    for path in paths:
        try:
            certificates = x509.load_pem_x509_certificates(path.read_bytes())
        except (OSError, ValueError) as error:
            raise PinguardError(f"Notation certificate {path}: not a readable PEM certificate ({error})") from error
        found.update(c.public_bytes(serialization.Encoding.DER) for c in certificates)
    return frozenset(found)


def verify_notation(layer: Layer, subject: str, anchors: Mapping[str, frozenset[bytes]], now: datetime) -> Signature:
    leaf = None
    try:
        check_size(layer.data)
        jws = _read_jws(layer.data)
        leaf = jws.chain[0]
        _check_jws_signature(jws, leaf)
        scheme, times = _validity_times(jws.protected, now)
        check_signs(member(load_json(jws.payload, "the JWS payload"), "targetArtifact", "digest"), subject)
        _check_chain(jws.chain)
        _check_trusted(jws.chain, scheme, anchors[scheme])
        for certificate in jws.chain:
            for moment in times:
                _check_valid(certificate, moment)
    except (Unreadable, Unverified) as why:
        return _notation_signature(leaf, subject, str(why))
    return _notation_signature(leaf, subject, None)


def _notation_signature(leaf: x509.Certificate | None, subject: str, problem: str | None) -> Signature:
    identity = _name(leaf.subject) if leaf else None
    issuer = _name(leaf.issuer) if leaf else None
    return Signature("notation", identity, issuer, problem is None, problem, subject)


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
        raise Unverified("the signing certificate's key is not a size Notation signs with")
    if jws.protected.get("alg") != algorithm:
        raise Unverified(f"its alg header does not match the signing key, which signs {algorithm}")
    digest = _HASHES[algorithm[2:]]
    try:
        if isinstance(key, rsa.RSAPublicKey):
            key.verify(jws.signature, jws.signing_input, padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
        else:
            key.verify(_der_signature(jws.signature, key), jws.signing_input, ec.ECDSA(digest))
    except InvalidSignature:
        raise Unverified("the signature does not match its payload and headers") from None


def _der_signature(raw: bytes, key: ec.EllipticCurvePublicKey) -> bytes:
    """JWS writes ECDSA signatures as R then S, each the curve's size; cryptography reads DER."""
    size = (key.curve.key_size + 7) // 8
    if len(raw) != 2 * size:
        raise Unverified("the signature does not match its payload and headers")
    return encode_dss_signature(int.from_bytes(raw[:size]), int.from_bytes(raw[size:]))


def _validity_times(protected: dict[str, object], now: datetime) -> tuple[str, tuple[datetime, ...]]:
    """The signing scheme, and when the chain must be valid: at signing, and now too unless the signing
    time is authentic (which `_check_trusted` takes only from a signing authority)."""
    if protected.get("cty") != _NOTATION_PAYLOAD:
        raise Unverified(f"its payload is not {_NOTATION_PAYLOAD}")
    _check_critical(protected)
    expiry = protected.get(_EXPIRY)
    if expiry is not None and _time(expiry, _EXPIRY) <= now:
        raise Unverified(f"the signature expired at {expiry}")
    scheme = protected.get(_SCHEME)
    if scheme == _X509:
        return scheme, (_time(protected.get(_SIGNING_TIME), _SIGNING_TIME), now)
    if scheme == _AUTHORITY:
        return scheme, (_time(protected.get(_AUTHENTIC_TIME), _AUTHENTIC_TIME),)
    raise Unverified(f"its signing scheme is neither {_X509} nor {_AUTHORITY}")


def _check_trusted(chain: Sequence[x509.Certificate], scheme: str, anchors: frozenset[bytes]) -> None:
    """The chain holds a certificate of its scheme's trust store."""
    if any(c.public_bytes(serialization.Encoding.DER) in anchors for c in chain):
        return
    if scheme == _AUTHORITY:
        raise Unverified(f"it claims an authentic signing time ({_AUTHORITY}), which only a trusted signing "
                          "authority vouches for, and no certificate of its chain is one "
                          "(provenance.notation-signing-authorities)")
    raise Unverified("no certificate of its chain is a trusted Notation certificate")


def _check_critical(protected: dict[str, object]) -> None:
    crit = protected.get("crit")
    if not isinstance(crit, list) or not all(isinstance(name, str) for name in crit):
        raise Unreadable("the protected header's crit is not a list of names")
    if _PLUGIN in crit:
        raise Unverified("it needs a Notation verification plugin, which pinguard does not run")
    if any(name not in _UNDERSTOOD for name in crit):
        raise Unverified("it has a critical header pinguard does not understand")
    if any(name not in protected for name in crit):
        raise Unverified("it marks as critical a header it does not carry")
    if any(name in protected and name not in crit for name in _MUST_BE_CRITICAL):
        raise Unverified("it carries a header that must be critical without marking it so")


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
        raise Unverified(f"certificate {_name(certificate.subject)} has a key too short for Notation")


def _check_leaf(leaf: x509.Certificate) -> None:
    constraints = _extension(leaf, x509.BasicConstraints)
    if constraints and constraints.value.ca:
        raise Unverified("the signing certificate is a CA")
    usage = _extension(leaf, x509.KeyUsage)
    if usage is None or not usage.critical or not usage.value.digital_signature:
        raise Unverified("the signing certificate's key usage is not marked critical for digital signatures")
    allowed = usage.value
    if any((allowed.key_encipherment, allowed.data_encipherment, allowed.key_agreement, allowed.key_cert_sign,
            allowed.crl_sign)):
        raise Unverified("the signing certificate's key usage allows more than signing")
    purposes = _extension(leaf, x509.ExtendedKeyUsage)
    if purposes and _FORBIDDEN_USAGES.intersection(purposes.value):
        raise Unverified("the signing certificate's extended key usage is not for code signing")


def _check_ca(certificate: x509.Certificate, below: int) -> None:
    """A CA with `below` intermediate CAs under it in the chain."""
    name = _name(certificate.subject)
    constraints = _extension(certificate, x509.BasicConstraints)
    if constraints is None or not constraints.critical or not constraints.value.ca:
        raise Unverified(f"certificate {name} issues certificates but has no critical CA basic constraints")
    limit = constraints.value.path_length
    if limit is not None and limit < below:
        raise Unverified(f"certificate {name} allows {limit} intermediate CAs below it, the chain has {below}")
    usage = _extension(certificate, x509.KeyUsage)
    if usage is None or not usage.critical or not usage.value.key_cert_sign:
        raise Unverified(f"certificate {name} issues certificates but its key usage does not allow it")


def _check_issued(child: x509.Certificate, issuer: x509.Certificate) -> None:
    try:
        child.verify_directly_issued_by(issuer)  # which refuses SHA-1 signatures, as Notary requires
    except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        what = ("is not self-signed, so the chain has no root" if child is issuer
                else f"is not issued by {_name(issuer.subject)}")
        raise Unverified(f"certificate {_name(child.subject)} {what}") from None


def _check_valid(certificate: x509.Certificate, moment: datetime) -> None:
    start, end = certificate.not_valid_before_utc, certificate.not_valid_after_utc
    if not start <= moment <= end:
        raise Unverified(f"certificate {_name(certificate.subject)} is valid from {start:%Y-%m-%dT%H:%M:%SZ} "
                          f"to {end:%Y-%m-%dT%H:%M:%SZ}, not at {moment.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}")


def _public_key(certificate: x509.Certificate) -> rsa.RSAPublicKey | ec.EllipticCurvePublicKey:
    try:
        key = certificate.public_key()
    except (ValueError, UnsupportedAlgorithm):
        key = None
    if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
        raise Unverified(f"certificate {_name(certificate.subject)} has neither an RSA nor an EC key")
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


