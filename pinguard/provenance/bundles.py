"""Sigstore bundles: keyless signatures that carry their certificate and transparency-log proof with them.

A bundle is verified offline, against the trusted_root.json the user names: the certificate must chain
to its CA and carry a CT log's timestamp, the log entry must be proven by its log's key, and the
signature must cover the subject. Two shapes are read:

- a DSSE envelope around an in-toto statement (what `cosign sign` and `cosign attest` write in the
  bundle format, and GitHub's attestations): the statement's subjects must name the subject digest;
- a message signature: for an image it signs the manifest's digest itself, so the subject digest is
  the message that was signed.

Any identity is accepted here: the certificate's identity and OIDC issuer are recorded, and policy
rules match them offline. The `sigstore` library (the `provenance` extra) is imported only when a
bundle is verified, so commands that never verify never load it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pinguard.provenance.evidence import IN_TOTO, SIGSTORE_BUNDLE, Artifact, Layer, Signature
from pinguard.provenance.payloads import Unreadable, Unverified, load_json
from pinguard.provenance.trust import Trust
from pinguard.reference import is_digest

if TYPE_CHECKING:
    from pathlib import Path

    from cryptography.x509 import Certificate
    from sigstore.hashes import Hashed

BUNDLE_MEDIA_TYPES = frozenset({
    SIGSTORE_BUNDLE,
    "application/vnd.dev.sigstore.bundle+json;version=0.1",
    "application/vnd.dev.sigstore.bundle+json;version=0.2",
    "application/vnd.dev.sigstore.bundle+json;version=0.3",
})
# A bundle is a few kilobytes; a DSSE one also carries its statement, an SBOM at most.
MAX_BUNDLE_BYTES = 32 * 1024 * 1024

# Fulcio's OIDC issuer extensions: the current one holds a DER UTF8String, the deprecated one raw text.
_ISSUER = "1.3.6.1.4.1.57264.1.8"
_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1"
_UTF8_STRING = 0x0C


def verify_bundle(artifact: Artifact, subject_digest: str, trust: Trust) -> Signature:
    """Verify the Sigstore bundle in `artifact` as a signature over `subject_digest`.

    Never raises for what the bundle, the trusted root or the library do: every failure is a
    `Signature` that did not verify, with the reason.
    """
    try:
        identity, issuer = _verify(artifact, subject_digest, trust)
    except (Unreadable, Unverified) as problem:
        return Signature(kind="sigstore", identity=None, issuer=None, verified=False, problem=str(problem),
                         subject=subject_digest)
    return Signature(kind="sigstore", identity=identity, issuer=issuer, verified=True, subject=subject_digest)


def _verify(artifact: Artifact, subject_digest: str, trust: Trust) -> tuple[str | None, str | None]:
    if not is_digest(subject_digest):
        raise Unverified(f"invalid subject digest {subject_digest!r}")
    if trust.trusted_root is None:
        raise Unverified("no Sigstore trusted root given to verify against")
    data = _bundle_layer(artifact).data
    if len(data) > MAX_BUNDLE_BYTES:
        raise Unverified(f"the bundle is {len(data)} bytes, more than the {MAX_BUNDLE_BYTES} allowed")
    document = load_json(data, "the bundle")
    if not isinstance(document, dict):
        raise Unverified("the bundle is not a JSON object")
    try:
        import sigstore  # noqa: F401  (the optional library, imported only here)
    except ImportError:
        raise Unverified("verifying Sigstore bundles needs the sigstore library: "
                          "install pinguard[provenance]") from None
    certificate = _verified_certificate(data, "dsseEnvelope" in document, subject_digest, trust.trusted_root)
    return _identity(certificate), _issuer(certificate)


def _bundle_layer(artifact: Artifact) -> Layer:
    for layer in artifact.layers:
        if layer.media_type in BUNDLE_MEDIA_TYPES:
            return layer
    raise Unverified(f"no Sigstore bundle among the artifact's {len(artifact.layers)} layer(s)")


def _verified_certificate(data: bytes, is_dsse: bool, subject_digest: str, trusted_root: Path) -> Certificate:
    """Verify the bundle with the sigstore library; return its signing certificate."""
    from sigstore.errors import Error as SigstoreError
    from sigstore.models import Bundle, TrustedRoot
    from sigstore.verify import Verifier

    # Parsing fails with sigstore's errors or ValueErrors (pydantic's, cryptography's).
    try:
        root = TrustedRoot.from_file(str(trusted_root))
    except OSError as error:
        raise Unverified(f"cannot read the trusted root {trusted_root}: {error.strerror or error}") from None
    except (SigstoreError, ValueError) as error:
        raise Unverified(f"{trusted_root} is not a Sigstore trusted root: {_reason(error)}") from None
    try:
        bundle = Bundle.from_json(data)
    except (SigstoreError, ValueError) as error:
        raise Unverified(f"malformed bundle: {_reason(error)}") from None
    message = None if is_dsse else _signed_message(subject_digest)
    signed_payload: tuple[str, bytes] | None = None
    try:
        verifier = Verifier(trusted_root=root)
        if message is None:
            signed_payload = verifier.verify_dsse(bundle, _AnyIdentity())
        else:
            verifier.verify_artifact(message, bundle, _AnyIdentity())
    except Exception as error:  # not only sigstore's own: a root's time without a zone fails with a TypeError
        raise Unverified(_reason(error)) from None
    if signed_payload is not None:
        _check_statement(*signed_payload, subject_digest)
    return bundle.signing_certificate


def _reason(error: Exception) -> str:
    """The library's complaint on one line; for a schema error, the first field it names."""
    from pydantic import ValidationError

    invalid = error if isinstance(error, ValidationError) else error.__context__
    if isinstance(invalid, ValidationError):
        first = invalid.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        return f"{field}: {first['msg']}" if field else first["msg"]
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


class _AnyIdentity:
    """A sigstore verification policy that accepts every identity: pinguard's policy rules judge it later."""

    def verify(self, cert: Certificate) -> None:
        """Accept `cert`: its chain, CT timestamp and log entry are still verified."""


def _signed_message(subject_digest: str) -> Hashed:
    """The subject digest as the message a message-signature bundle signed (already hashed)."""
    from sigstore.hashes import Hashed
    from sigstore_models.common.v1 import HashAlgorithm

    algorithm, _, hex_digest = subject_digest.partition(":")
    if algorithm != "sha256":
        raise Unverified(f"a message-signature bundle signs a sha256 digest, not {subject_digest}")
    return Hashed(algorithm=HashAlgorithm.SHA2_256, digest=bytes.fromhex(hex_digest))


def _check_statement(payload_type: str, payload: bytes, subject_digest: str) -> None:
    """The signed payload must be an in-toto statement about `subject_digest`."""
    if payload_type != IN_TOTO:
        raise Unverified(f"the signed payload is {payload_type!r}, not an in-toto statement")
    statement = load_json(payload, "the signed statement")
    subjects = statement.get("subject") if isinstance(statement, dict) else None
    algorithm, _, hex_digest = subject_digest.partition(":")
    if not isinstance(subjects, list) or not any(
        isinstance(subject, dict) and isinstance(subject.get("digest"), dict)
        and subject["digest"].get(algorithm) == hex_digest
        for subject in subjects
    ):
        raise Unverified(f"the signed statement's subjects do not name {subject_digest}")


def _identity(certificate: Certificate) -> str | None:
    """The certificate's subject alternative name: the signer's email or URI (a workflow, for CI),
    else a Fulcio username (an other-name holding a UTF8String)."""
    from cryptography import x509

    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None
    found = [*names.get_values_for_type(x509.RFC822Name), *names.get_values_for_type(x509.UniformResourceIdentifier),
             *(_utf8_string(other.value) for other in names.get_values_for_type(x509.OtherName))]
    return next((name for name in found if name), None)


def _issuer(certificate: Certificate) -> str | None:
    """The OIDC issuer Fulcio recorded, from the current extension or else the deprecated one."""
    current, deprecated = _extension(certificate, _ISSUER), _extension(certificate, _ISSUER_V1)
    if current is not None:
        return _utf8_string(current)
    if deprecated is not None:
        return _text(deprecated)
    return None


def _extension(certificate: Certificate, oid: str) -> bytes | None:
    from cryptography import x509

    try:
        value = certificate.extensions.get_extension_for_oid(x509.ObjectIdentifier(oid)).value
    except x509.ExtensionNotFound:
        return None
    return value.value if isinstance(value, x509.UnrecognizedExtension) else None


def _utf8_string(der: bytes) -> str | None:
    """Decode a DER UTF8String (tag, length in short or long form, text); None when it is not one."""
    if len(der) < 2 or der[0] != _UTF8_STRING:
        return None
    start, length = 2, der[1]
    if length & 0x80:
        start += length & 0x7F
        length = int.from_bytes(der[2:start], "big")
    return _text(der[start:]) if len(der) - start == length else None


def _text(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
