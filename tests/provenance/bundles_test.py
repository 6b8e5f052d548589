"""Sigstore bundles, verified offline against a trusted root.

Most cases use a Sigstore made here: a CA, a transparency log and a CT log with fresh keys, so every
proof the library checks (certificate chain, embedded SCT, inclusion proof, signed checkpoint, signed
entry timestamp, signature) is real and any field can be changed. One recorded bundle from GitHub
Actions, checked against Sigstore's public trusted root, shows a real Fulcio certificate is read the
same way (tests/provenance/data/SOURCES.md says where both come from).
"""
from __future__ import annotations

import base64
import hashlib
import json
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID

from pinguard.provenance.bundles import verify_bundle
from pinguard.provenance.model import IN_TOTO, SIGSTORE_BUNDLE, Artifact, Layer, Signature, Trust

DATA = Path(__file__).parent / "data"
SIGNED_AT = datetime(2025, 6, 2, 9, 30, tzinfo=UTC)
IDENTITY = "https://github.com/example/trainer/.github/workflows/release.yml@refs/heads/main"
SIGNER = x509.UniformResourceIdentifier(IDENTITY)
ISSUER = "https://token.actions.githubusercontent.com"
IMAGE = "sha256:" + hashlib.sha256(b"an image manifest").hexdigest()
OTHER_IMAGE = "sha256:" + hashlib.sha256(b"another image manifest").hexdigest()
ISSUER_OID = "1.3.6.1.4.1.57264.1.8"  # a DER UTF8String
ISSUER_V1_OID = "1.3.6.1.4.1.57264.1.1"  # raw text, deprecated

Json = dict[str, Any]
PrivateKey = ec.EllipticCurvePrivateKey


def _new_key() -> PrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _spki(key: PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _der(tag: int, content: bytes) -> bytes:
    """A DER TLV, with the length in short or long form."""
    if len(content) < 0x80:
        return bytes([tag, len(content)]) + content
    size = len(content).to_bytes((len(content).bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + content


def _canonical(value: Json) -> bytes:
    """RFC 8785 JSON for what these tests log: ASCII strings and integers only."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


@dataclass(frozen=True)
class LocalSigstore:
    """A CA, a transparency log and a CT log, and one certificate the CA issued to IDENTITY."""

    ca: x509.Certificate
    certificate: x509.Certificate
    ct_key: PrivateKey
    log_key: PrivateKey
    signer_key: PrivateKey

    @classmethod
    def create(cls, issuer_extension: x509.UnrecognizedExtension,
               identity: x509.GeneralName = SIGNER) -> LocalSigstore:
        ca_key, ct_key, log_key, signer_key = (_new_key() for _ in range(4))
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test sigstore CA")])
        ca = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(ca_key.public_key())
            .serial_number(1).not_valid_before(SIGNED_AT - timedelta(days=30))
            .not_valid_after(SIGNED_AT + timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        leaf = (
            x509.CertificateBuilder().subject_name(x509.Name([])).issuer_name(name)
            .public_key(signer_key.public_key()).serial_number(2)
            .not_valid_before(SIGNED_AT - timedelta(minutes=1)).not_valid_after(SIGNED_AT + timedelta(minutes=9))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
            .add_extension(x509.SubjectAlternativeName([identity]), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .add_extension(issuer_extension, critical=False)
        )
        sct_list = _sct_list(leaf.sign(ca_key, hashes.SHA256()).tbs_certificate_bytes, ca_key, ct_key)
        certificate = leaf.add_extension(
            x509.UnrecognizedExtension(ExtensionOID.PRECERT_SIGNED_CERTIFICATE_TIMESTAMPS, _der(0x04, sct_list)),
            critical=False,
        ).sign(ca_key, hashes.SHA256())
        return cls(ca, certificate, ct_key, log_key, signer_key)

    def trusted_root(self) -> Json:
        def log(key: PrivateKey, url: str) -> Json:
            return {
                "baseUrl": url, "hashAlgorithm": "SHA2_256",
                "publicKey": {"rawBytes": _b64(_spki(key)), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                              "validFor": {"start": "2025-01-01T00:00:00Z"}},
                "logId": {"keyId": _b64(hashlib.sha256(_spki(key)).digest())},
            }

        return {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(self.log_key, "https://log.test")],
            "ctlogs": [log(self.ct_key, "https://ct.test")],
            "certificateAuthorities": [{
                "subject": {"organization": "test", "commonName": "test sigstore CA"},
                "uri": "https://ca.test",
                "certChain": {"certificates": [{"rawBytes": _b64(self.ca.public_bytes(serialization.Encoding.DER))}]},
                "validFor": {"start": "2025-01-01T00:00:00Z"},
            }],
        }

    def dsse_bundle(self, statement: Json | bytes, payload_type: str = IN_TOTO) -> Json:
        """What `cosign sign` writes in the bundle format: a DSSE envelope around an in-toto statement."""
        payload = statement if isinstance(statement, bytes) else json.dumps(statement).encode()
        pae = b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type.encode(), len(payload), payload)
        signature = self.signer_key.sign(pae, ec.ECDSA(hashes.SHA256()))
        envelope = {"payload": _b64(payload), "payloadType": payload_type, "signatures": [{"sig": _b64(signature)}]}
        body = {"apiVersion": "0.0.1", "kind": "dsse", "spec": {
            "envelopeHash": {"algorithm": "sha256", "value": hashlib.sha256(_canonical(envelope)).hexdigest()},
            "payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(payload).hexdigest()},
            "signatures": [{"signature": _b64(signature), "verifier": _b64(self._pem())}],
        }}
        return self._bundle("dsse", body, {"dsseEnvelope": envelope})

    def message_bundle(self, digest: str) -> Json:
        """A message signature over an image: the manifest's digest is the message, already hashed."""
        hashed = bytes.fromhex(digest.removeprefix("sha256:"))
        signature = self.signer_key.sign(hashed, ec.ECDSA(Prehashed(hashes.SHA256())))
        body = {"apiVersion": "0.0.1", "kind": "hashedrekord", "spec": {
            "data": {"hash": {"algorithm": "sha256", "value": hashed.hex()}},
            "signature": {"content": _b64(signature), "publicKey": {"content": _b64(self._pem())}},
        }}
        message = {"messageDigest": {"algorithm": "SHA2_256", "digest": _b64(hashed)}, "signature": _b64(signature)}
        return self._bundle("hashedrekord", body, {"messageSignature": message})

    def _pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def _bundle(self, kind: str, body: Json, content: Json) -> Json:
        """The bundle around `content`, logged as entry 0 of a one-entry log: the leaf is the root."""
        logged = _canonical(body)
        log_id = hashlib.sha256(_spki(self.log_key)).digest()
        root = hashlib.sha256(b"\x00" + logged).digest()
        note = f"log.test - 1\n1\n{_b64(root)}\n"
        note_signature = self.log_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        integrated = int(SIGNED_AT.timestamp())
        promise = _canonical({"body": _b64(logged), "integratedTime": integrated, "logID": log_id.hex(), "logIndex": 0})
        return {
            "mediaType": SIGSTORE_BUNDLE,
            "verificationMaterial": {
                "certificate": {"rawBytes": _b64(self.certificate.public_bytes(serialization.Encoding.DER))},
                "tlogEntries": [{
                    "logIndex": "0", "logId": {"keyId": _b64(log_id)},
                    "kindVersion": {"kind": kind, "version": "0.0.1"},
                    "integratedTime": str(integrated),
                    "inclusionPromise": {
                        "signedEntryTimestamp": _b64(self.log_key.sign(promise, ec.ECDSA(hashes.SHA256())))},
                    "inclusionProof": {
                        "logIndex": "0", "rootHash": _b64(root), "treeSize": "1", "hashes": [],
                        "checkpoint": {"envelope": f"{note}\n\u2014 log.test {_b64(log_id[:4] + note_signature)}\n"},
                    },
                    "canonicalizedBody": _b64(logged),
                }],
            },
            **content,
        }


def _sct_list(tbs_precertificate: bytes, ca_key: PrivateKey, ct_key: PrivateKey) -> bytes:
    """An RFC 6962 SCT list holding the CT log's timestamp over the precertificate."""
    millis = int(SIGNED_AT.timestamp() * 1000)
    # v1, a certificate timestamp, when, a precertificate entry: its issuer's key hash and TBS; no extensions
    signed = (struct.pack("!BBQH", 0, 0, millis, 1) + hashlib.sha256(_spki(ca_key)).digest()
              + len(tbs_precertificate).to_bytes(3, "big") + tbs_precertificate + b"\x00\x00")
    signature = ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
    # v1, the log's id, when, no extensions, then the signature: SHA-256 (4) with ECDSA (3)
    sct = (b"\x00" + hashlib.sha256(_spki(ct_key)).digest() + struct.pack("!QH", millis, 0)
           + struct.pack("!BBH", 4, 3, len(signature)) + signature)
    return struct.pack("!HH", len(sct) + 2, len(sct)) + sct


def _statement(*digests: str) -> Json:
    subjects = [{"name": "registry.test/trainer", "digest": {"sha256": d.removeprefix("sha256:")}} for d in digests]
    return {"_type": "https://in-toto.io/Statement/v1", "subject": subjects,
            "predicateType": "https://sigstore.dev/cosign/sign/v1", "predicate": {}}


def _artifact(bundle: Json | bytes, media_type: str = SIGSTORE_BUNDLE) -> Artifact:
    data = bundle if isinstance(bundle, bytes) else json.dumps(bundle).encode()
    layer = Layer(media_type, "sha256:" + hashlib.sha256(data).hexdigest(), {}, data)
    return Artifact(IMAGE, SIGSTORE_BUNDLE, "sha256:" + "e" * 64, {}, (layer,), "referrers")


def _issuer_extension(issuer: str = ISSUER) -> x509.UnrecognizedExtension:
    return x509.UnrecognizedExtension(x509.ObjectIdentifier(ISSUER_OID), _der(0x0C, issuer.encode()))


def _trust(root: Json, folder: Path) -> Trust:
    path = folder / "trusted_root.json"
    path.write_text(json.dumps(root))
    return Trust(trusted_root=path)


def _flip_last_byte(text: str) -> str:
    raw = base64.b64decode(text)
    return _b64(raw[:-1] + bytes([raw[-1] ^ 1]))


def _unverified(problem: str) -> Signature:
    return Signature(kind="sigstore", identity=None, issuer=None, verified=False, problem=problem)


def _problem(signature: Signature) -> str:
    """The problem of a signature that did not verify (and so names no signer)."""
    assert not signature.verified and signature.identity is None and signature.issuer is None
    assert signature.problem is not None and "\n" not in signature.problem
    return signature.problem


VERIFIED = Signature(kind="sigstore", identity=IDENTITY, issuer=ISSUER, verified=True)


@pytest.fixture(scope="module")
def sigstore() -> LocalSigstore:
    return LocalSigstore.create(_issuer_extension())


@pytest.fixture
def trust(sigstore: LocalSigstore, tmp_path: Path) -> Trust:
    return _trust(sigstore.trusted_root(), tmp_path)


def test_a_dsse_bundle_about_the_image_verifies_and_names_its_signer(sigstore: LocalSigstore, trust: Trust) -> None:
    bundle = sigstore.dsse_bundle(_statement(OTHER_IMAGE, IMAGE))  # any of the subjects may be the image
    assert verify_bundle(_artifact(bundle), IMAGE, trust) == VERIFIED


def test_a_message_signature_over_the_image_digest_verifies(sigstore: LocalSigstore, trust: Trust) -> None:
    assert verify_bundle(_artifact(sigstore.message_bundle(IMAGE)), IMAGE, trust) == VERIFIED


@pytest.mark.parametrize("media_type", [
    "application/vnd.dev.sigstore.bundle+json;version=0.3",
    "application/vnd.dev.sigstore.bundle+json;version=0.2",
])
def test_older_bundle_layer_media_types_are_read(sigstore: LocalSigstore, trust: Trust, media_type: str) -> None:
    assert verify_bundle(_artifact(sigstore.message_bundle(IMAGE), media_type), IMAGE, trust) == VERIFIED


def test_the_deprecated_issuer_extension_is_read_when_alone(tmp_path: Path) -> None:
    old = LocalSigstore.create(x509.UnrecognizedExtension(x509.ObjectIdentifier(ISSUER_V1_OID), ISSUER.encode()))
    assert verify_bundle(_artifact(old.message_bundle(IMAGE)), IMAGE, _trust(old.trusted_root(), tmp_path)) == VERIFIED


@pytest.mark.parametrize(("name", "identity"), [
    (x509.RFC822Name("trainer@example.com"), "trainer@example.com"),
    (x509.OtherName(x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.7"), _der(0x0C, b"trainer")), "trainer"),
], ids=["email", "username"])
def test_the_identity_is_any_name_fulcio_gives(tmp_path: Path, name: x509.GeneralName, identity: str) -> None:
    issued = LocalSigstore.create(_issuer_extension(), name)
    signature = verify_bundle(_artifact(issued.message_bundle(IMAGE)), IMAGE, _trust(issued.trusted_root(), tmp_path))
    assert signature == Signature(kind="sigstore", identity=identity, issuer=ISSUER, verified=True)


def test_an_issuer_longer_than_127_bytes_is_read(tmp_path: Path) -> None:
    issuer = "https://issuer.example.com/" + "tenant/" * 20  # its DER length takes the long form
    issued = LocalSigstore.create(_issuer_extension(issuer))
    signature = verify_bundle(_artifact(issued.message_bundle(IMAGE)), IMAGE, _trust(issued.trusted_root(), tmp_path))
    assert signature == Signature(kind="sigstore", identity=IDENTITY, issuer=issuer, verified=True)


def _recorded() -> tuple[bytes, str]:
    """The recorded GitHub Actions bundle and the digest it signs (of a wheel; an image's, to pinguard)."""
    bundle = (DATA / "github-actions.sigstore.json").read_bytes()
    signed = base64.b64decode(json.loads(bundle)["messageSignature"]["messageDigest"]["digest"])
    return bundle, "sha256:" + signed.hex()


def test_a_recorded_github_actions_bundle_verifies_against_sigstores_public_root() -> None:
    """A real Fulcio certificate: a workflow URI as identity, GitHub's token service as issuer."""
    bundle, signed = _recorded()
    signature = verify_bundle(_artifact(bundle), signed, Trust(trusted_root=DATA / "sigstore-public-trusted-root.json"))
    assert signature == Signature(
        kind="sigstore", verified=True, issuer="https://token.actions.githubusercontent.com",
        identity="https://github.com/trailofbits/rfc8785.py/.github/workflows/release.yml@refs/tags/v0.1.2")


def test_the_recorded_bundle_does_not_verify_against_another_root(trust: Trust) -> None:
    bundle, signed = _recorded()
    assert _problem(verify_bundle(_artifact(bundle), signed, trust)).startswith(
        "failed to build timestamp certificate chain")


def test_a_root_from_another_sigstore_does_not_verify(sigstore: LocalSigstore, tmp_path: Path) -> None:
    other = LocalSigstore.create(_issuer_extension())
    signature = verify_bundle(_artifact(sigstore.dsse_bundle(_statement(IMAGE))), IMAGE,
                              _trust(other.trusted_root(), tmp_path))
    assert _problem(signature).startswith("failed to build timestamp certificate chain")


def test_the_log_key_must_be_the_roots(sigstore: LocalSigstore, tmp_path: Path) -> None:
    root = sigstore.trusted_root()
    root["tlogs"][0]["publicKey"]["rawBytes"] = _b64(_spki(_new_key()))
    signature = verify_bundle(_artifact(sigstore.dsse_bundle(_statement(IMAGE))), IMAGE, _trust(root, tmp_path))
    assert _problem(signature).startswith("invalid log entry: checkpoint: invalid signature")


def test_a_statement_about_another_image_does_not_verify(sigstore: LocalSigstore, trust: Trust) -> None:
    bundle = sigstore.dsse_bundle(_statement(OTHER_IMAGE))
    assert verify_bundle(_artifact(bundle), IMAGE, trust) == _unverified(
        f"the signed statement's subjects do not name {IMAGE}")


@pytest.mark.parametrize(("payload", "payload_type", "problem"), [
    (b"{}", "text/plain", "the signed payload is 'text/plain', not an in-toto statement"),
    (b"{", IN_TOTO, "the signed statement is not JSON: "),
    (b"[]", IN_TOTO, f"the signed statement's subjects do not name {IMAGE}"),
    (b'{"subject": {"digest": {}}}', IN_TOTO, f"the signed statement's subjects do not name {IMAGE}"),
    (b'{"subject": ["sha256"]}', IN_TOTO, f"the signed statement's subjects do not name {IMAGE}"),
])
def test_a_signed_payload_must_be_a_statement_about_the_image(
        sigstore: LocalSigstore, trust: Trust, payload: bytes, payload_type: str, problem: str) -> None:
    signature = verify_bundle(_artifact(sigstore.dsse_bundle(payload, payload_type)), IMAGE, trust)
    assert _problem(signature).startswith(problem)


def test_a_message_signature_over_another_image_does_not_verify(sigstore: LocalSigstore, trust: Trust) -> None:
    assert verify_bundle(_artifact(sigstore.message_bundle(OTHER_IMAGE)), IMAGE, trust) == _unverified(
        "Bundle message digest mismatch")


def test_a_message_signature_needs_a_sha256_subject(sigstore: LocalSigstore, trust: Trust) -> None:
    subject = "sha512:" + "a" * 128
    assert verify_bundle(_artifact(sigstore.message_bundle(IMAGE)), subject, trust) == _unverified(
        f"a message-signature bundle signs a sha256 digest, not {subject}")


def _tamper_signature(bundle: Json) -> None:
    signature = bundle["dsseEnvelope"]["signatures"][0]
    signature["sig"] = _flip_last_byte(signature["sig"])


def _tamper_payload(bundle: Json) -> None:
    bundle["dsseEnvelope"]["payload"] = _b64(json.dumps(_statement(IMAGE, OTHER_IMAGE)).encode())


def _tamper_message_signature(bundle: Json) -> None:
    bundle["messageSignature"]["signature"] = _flip_last_byte(bundle["messageSignature"]["signature"])


def _tamper_certificate(bundle: Json) -> None:
    certificate = bundle["verificationMaterial"]["certificate"]
    certificate["rawBytes"] = _flip_last_byte(certificate["rawBytes"])


def _tamper_checkpoint(bundle: Json) -> None:
    checkpoint = bundle["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["checkpoint"]
    note, signed = checkpoint["envelope"].split("\n\n")
    dash, name, signature = signed.split()
    checkpoint["envelope"] = f"{note}\n\n{dash} {name} {_flip_last_byte(signature)}\n"


def _tamper_promise(bundle: Json) -> None:
    promise = bundle["verificationMaterial"]["tlogEntries"][0]["inclusionPromise"]
    promise["signedEntryTimestamp"] = _flip_last_byte(promise["signedEntryTimestamp"])


@pytest.mark.parametrize(("shape", "tamper", "problem"), [
    ("dsse", _tamper_signature, "DSSE: invalid signature"),
    ("dsse", _tamper_payload, "DSSE: invalid signature"),
    ("message", _tamper_message_signature, "Signature is invalid for input"),
    ("dsse", _tamper_certificate, "failed to build timestamp certificate chain"),
    ("message", _tamper_checkpoint, "invalid log entry: checkpoint: invalid signature"),
    ("dsse", _tamper_promise, "invalid log entry: SET: invalid inclusion promise"),
], ids=["signature", "payload", "message-signature", "certificate", "checkpoint", "promise"])
def test_a_tampered_bundle_does_not_verify(
        sigstore: LocalSigstore, trust: Trust, shape: str, tamper: Callable[[Json], None], problem: str) -> None:
    bundle = sigstore.dsse_bundle(_statement(IMAGE)) if shape == "dsse" else sigstore.message_bundle(IMAGE)
    tamper(bundle)
    assert _problem(verify_bundle(_artifact(bundle), IMAGE, trust)).startswith(problem)


@pytest.mark.parametrize(("data", "problem"), [
    (b'{"a": "\xff"}', "the bundle is not JSON: 'utf-8' codec can't decode"),
    (b"{", "the bundle is not JSON: Expecting property name"),
    (b"[" * 100_000, "the bundle is nested too deeply"),
    (b"[]", "the bundle is not a JSON object"),
    (b'{"mediaType": "%s"}' % SIGSTORE_BUNDLE.encode(), "malformed bundle: verificationMaterial: Field required"),
    (b'{"mediaType": "text/plain", "verificationMaterial": {}}', "malformed bundle: mediaType: Input should be "),
])
def test_a_malformed_bundle_is_a_clean_problem(trust: Trust, data: bytes, problem: str) -> None:
    assert _problem(verify_bundle(_artifact(data), IMAGE, trust)).startswith(problem)


@pytest.mark.parametrize(("root", "problem"), [
    (b"not json", "Invalid JSON: expected ident at line 1 column 2"),
    (b"{}", "mediaType: Field required"),
    (b'{"mediaType": "text/plain"}', "mediaType: Input should be "),
])
def test_a_malformed_trusted_root_is_a_clean_problem(
        sigstore: LocalSigstore, tmp_path: Path, root: bytes, problem: str) -> None:
    path = tmp_path / "root.json"
    path.write_bytes(root)
    signature = verify_bundle(_artifact(sigstore.message_bundle(IMAGE)), IMAGE, Trust(trusted_root=path))
    assert _problem(signature).startswith(f"{path} is not a Sigstore trusted root: {problem}")


def test_a_trusted_root_time_without_a_zone_is_a_clean_problem(sigstore: LocalSigstore, tmp_path: Path) -> None:
    root = sigstore.trusted_root()
    root["ctlogs"][0]["publicKey"]["validFor"]["start"] = "2025-01-01T00:00:00"  # the library fails with a TypeError
    assert verify_bundle(_artifact(sigstore.message_bundle(IMAGE)), IMAGE, _trust(root, tmp_path)) == _unverified(
        "can't compare offset-naive and offset-aware datetimes")


def test_an_unreadable_trusted_root_is_a_clean_problem(sigstore: LocalSigstore, tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    assert verify_bundle(_artifact(sigstore.message_bundle(IMAGE)), IMAGE, Trust(trusted_root=missing)) == _unverified(
        f"cannot read the trusted root {missing}: No such file or directory")


def test_without_a_trusted_root_nothing_verifies(sigstore: LocalSigstore) -> None:
    assert verify_bundle(_artifact(sigstore.message_bundle(IMAGE)), IMAGE, Trust()) == _unverified(
        "no Sigstore trusted root given to verify against")


def test_an_artifact_without_a_bundle_layer(trust: Trust) -> None:
    assert verify_bundle(_artifact(b"{}", "application/vnd.oci.empty.v1+json"), IMAGE, trust) == _unverified(
        "no Sigstore bundle among the artifact's 1 layer(s)")


def test_an_invalid_subject_digest_is_refused(sigstore: LocalSigstore, trust: Trust) -> None:
    assert verify_bundle(_artifact(sigstore.message_bundle(IMAGE)), "sha256:../../etc", trust) == _unverified(
        "invalid subject digest 'sha256:../../etc'")


def test_without_the_sigstore_library_the_problem_says_what_to_install(
        sigstore: LocalSigstore, trust: Trust, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name.split(".")[0] == "sigstore"]:
        monkeypatch.setitem(sys.modules, name, None)  # importing any of it now fails
    monkeypatch.setitem(sys.modules, "sigstore", None)  # also when nothing of it was loaded yet
    assert verify_bundle(_artifact(sigstore.message_bundle(IMAGE)), IMAGE, trust) == _unverified(
        "verifying Sigstore bundles needs the sigstore library: install pinguard[provenance]")


def test_the_library_is_loaded_only_to_verify() -> None:
    code = "import sys, pinguard.provenance.bundles; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert [name for name in loaded if name.split(".")[0] in ("sigstore", "cryptography", "pydantic")] == []
