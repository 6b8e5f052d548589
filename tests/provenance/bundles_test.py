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
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from pinguard.provenance.bundles import verify_bundle
from pinguard.provenance.evidence import IN_TOTO, SIGSTORE_BUNDLE, Artifact, Layer, Signature
from pinguard.provenance.trust import Trust
from testing.signing import (
    SIGSTORE_IDENTITY,
    SIGSTORE_ISSUER,
    Json,
    LocalSigstore,
    b64,
    der,
    fulcio_issuer,
    spki,
)

DATA = Path(__file__).parent / "data"
IDENTITY = SIGSTORE_IDENTITY
ISSUER = SIGSTORE_ISSUER
IMAGE = "sha256:" + hashlib.sha256(b"an image manifest").hexdigest()
OTHER_IMAGE = "sha256:" + hashlib.sha256(b"another image manifest").hexdigest()
ISSUER_V1_OID = "1.3.6.1.4.1.57264.1.1"  # raw text, deprecated


def _statement(*digests: str) -> Json:
    subjects = [{"name": "registry.test/trainer", "digest": {"sha256": d.removeprefix("sha256:")}} for d in digests]
    return {"_type": "https://in-toto.io/Statement/v1", "subject": subjects,
            "predicateType": "https://sigstore.dev/cosign/sign/v1", "predicate": {}}


def _artifact(bundle: Json | bytes, media_type: str = SIGSTORE_BUNDLE) -> Artifact:
    data = bundle if isinstance(bundle, bytes) else json.dumps(bundle).encode()
    layer = Layer(media_type, "sha256:" + hashlib.sha256(data).hexdigest(), {}, data)
    return Artifact(IMAGE, SIGSTORE_BUNDLE, "sha256:" + "e" * 64, {}, (layer,), "referrers")



def _trust(root: Json, folder: Path) -> Trust:
    path = folder / "trusted_root.json"
    path.write_text(json.dumps(root))
    return Trust(trusted_root=path)


def _flip_last_byte(text: str) -> str:
    raw = base64.b64decode(text)
    return b64(raw[:-1] + bytes([raw[-1] ^ 1]))


def _unverified(problem: str, subject: str = IMAGE) -> Signature:
    return Signature(kind="sigstore", identity=None, issuer=None, verified=False, problem=problem, subject=subject)


def _problem(signature: Signature) -> str:
    """The problem of a signature that did not verify (and so names no signer)."""
    assert not signature.verified and signature.identity is None and signature.issuer is None
    assert signature.problem is not None and "\n" not in signature.problem
    return signature.problem


VERIFIED = Signature(kind="sigstore", identity=IDENTITY, issuer=ISSUER, verified=True, subject=IMAGE)


@pytest.fixture(scope="module")
def sigstore() -> LocalSigstore:
    return LocalSigstore.create(fulcio_issuer())


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
    (x509.OtherName(x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.7"), der(0x0C, b"trainer")), "trainer"),
], ids=["email", "username"])
def test_the_identity_is_any_name_fulcio_gives(tmp_path: Path, name: x509.GeneralName, identity: str) -> None:
    issued = LocalSigstore.create(fulcio_issuer(), name)
    signature = verify_bundle(_artifact(issued.message_bundle(IMAGE)), IMAGE, _trust(issued.trusted_root(), tmp_path))
    assert signature == Signature(kind="sigstore", identity=identity, issuer=ISSUER, verified=True, subject=IMAGE)


def test_an_issuer_longer_than_127_bytes_is_read(tmp_path: Path) -> None:
    issuer = "https://issuer.example.com/" + "tenant/" * 20  # its DER length takes the long form
    issued = LocalSigstore.create(fulcio_issuer(issuer))
    signature = verify_bundle(_artifact(issued.message_bundle(IMAGE)), IMAGE, _trust(issued.trusted_root(), tmp_path))
    assert signature == Signature(kind="sigstore", identity=IDENTITY, issuer=issuer, verified=True, subject=IMAGE)


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
        kind="sigstore", verified=True, issuer="https://token.actions.githubusercontent.com", subject=signed,
        identity="https://github.com/trailofbits/rfc8785.py/.github/workflows/release.yml@refs/tags/v0.1.2")


def test_the_recorded_bundle_does_not_verify_against_another_root(trust: Trust) -> None:
    bundle, signed = _recorded()
    assert _problem(verify_bundle(_artifact(bundle), signed, trust)).startswith(
        "failed to build timestamp certificate chain")


def test_a_root_from_another_sigstore_does_not_verify(sigstore: LocalSigstore, tmp_path: Path) -> None:
    other = LocalSigstore.create(fulcio_issuer())
    signature = verify_bundle(_artifact(sigstore.dsse_bundle(_statement(IMAGE))), IMAGE,
                              _trust(other.trusted_root(), tmp_path))
    assert _problem(signature).startswith("failed to build timestamp certificate chain")


def test_the_log_key_must_be_the_roots(sigstore: LocalSigstore, tmp_path: Path) -> None:
    root = sigstore.trusted_root()
    root["tlogs"][0]["publicKey"]["rawBytes"] = b64(spki(ec.generate_private_key(ec.SECP256R1())))
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
        f"a message-signature bundle signs a sha256 digest, not {subject}", subject)


def _tamper_signature(bundle: Json) -> None:
    signature = bundle["dsseEnvelope"]["signatures"][0]
    signature["sig"] = _flip_last_byte(signature["sig"])


def _tamper_payload(bundle: Json) -> None:
    bundle["dsseEnvelope"]["payload"] = b64(json.dumps(_statement(IMAGE, OTHER_IMAGE)).encode())


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
        "invalid subject digest 'sha256:../../etc'", "sha256:../../etc")


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
