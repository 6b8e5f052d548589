from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa, x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import given, settings
from hypothesis import strategies as st

from pinguard.errors import PinguardError
from pinguard.provenance import signatures
from pinguard.provenance.evidence import COSIGN_SIGNATURE, NOTATION_SIGNATURE, Layer, Signature
from pinguard.provenance.payloads import MAX_SIGNATURE_BYTES, Unreadable
from pinguard.provenance.signatures import verify
from pinguard.provenance.trust import Trust
from testing import signing
from testing.signing import NOW

IMAGE = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64


@pytest.fixture(scope="module")
def keys() -> dict[str, signing.SigningKey]:
    return {kind: signing.new_key(kind) for kind in ("ecdsa", "ecdsa-p384", "ed25519", "rsa")}


def _trust(tmp_path: Path, *keys: signing.SigningKey) -> Trust:
    return Trust(keys=tuple(signing.write_public_key(k, tmp_path / f"key{n}.pub") for n, k in enumerate(keys)))


def _cosign(layer_: Layer, trust: Trust, subject: str = IMAGE) -> Signature:
    [signature] = verify(signing.artifact(subject, COSIGN_SIGNATURE, layer_, found_by="tag"), subject, trust)
    return signature


# --- cosign -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["ecdsa", "ecdsa-p384", "ed25519", "rsa"])
def test_cosign_signature_verifies_with_each_key_type(tmp_path, keys, kind):
    key = keys[kind]
    layer = signing.cosign_layer(key, signing.cosign_payload(IMAGE))
    assert _cosign(layer, _trust(tmp_path, key)) == Signature("cosign", signing.key_id(key), None, True, subject=IMAGE,
                                                              reference="registry.example/team/app")


@pytest.mark.parametrize(("claimed", "recorded"), [
    ("docker.io/evil/other", "docker.io/evil/other"),  # another repository: recorded as signed, judged by the rule
    ("index.docker.io/library/nginx:1.25", "index.docker.io/library/nginx:1.25"),  # as written, tag and all
    (None, ""),  # no identity at all: names no image
    ("", ""),
])
def test_a_cosign_signature_records_the_image_it_says_it_signs(tmp_path, keys, claimed, recorded):
    layer = signing.cosign_layer(keys["ecdsa"], signing.cosign_payload(IMAGE, reference=claimed))
    signature = _cosign(layer, _trust(tmp_path, keys["ecdsa"]))
    assert (signature.verified, signature.reference) == (True, recorded)


@pytest.mark.parametrize("claimed", ["Not A Reference", "docker.io/evil/\x1b[31m", 42, ["ghcr.io/acme/trainer"]])
def test_a_docker_reference_that_is_no_image_reference_does_not_verify(tmp_path, keys, claimed):
    layer = signing.cosign_layer(keys["ecdsa"], signing.cosign_payload(IMAGE, reference=claimed))
    assert _cosign(layer, _trust(tmp_path, keys["ecdsa"])) == Signature(
        "cosign", signing.key_id(keys["ecdsa"]), None, False,
        "the signed payload's docker-reference is not an image reference", IMAGE)


def test_key_id_is_the_sha256_of_the_public_key_der(keys):
    der = keys["ecdsa"].public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    assert signatures.key_id(keys["ecdsa"].public_key()) == "sha256:" + hashlib.sha256(der).hexdigest()


def test_the_key_that_verifies_is_named_among_several(tmp_path, keys):
    layer = signing.cosign_layer(keys["rsa"], signing.cosign_payload(IMAGE))
    signature = _cosign(layer, _trust(tmp_path, keys["ecdsa"], keys["ed25519"], keys["rsa"]))
    assert (signature.verified, signature.identity) == (True, signing.key_id(keys["rsa"]))


def test_a_signature_by_an_untrusted_key_does_not_verify(tmp_path, keys):
    layer = signing.cosign_layer(keys["ecdsa"], signing.cosign_payload(IMAGE))
    assert _cosign(layer, _trust(tmp_path, keys["ed25519"], keys["rsa"])) == Signature(
        "cosign", None, None, False, "none of the 2 trusted cosign keys verifies it", IMAGE)


def test_without_keys_nothing_verifies(keys):
    layer = signing.cosign_layer(keys["ecdsa"], signing.cosign_payload(IMAGE))
    assert _cosign(layer, Trust()).problem == "no cosign key was given to verify it with"


def test_a_payload_naming_another_digest_is_signed_but_not_for_this_image(tmp_path, keys):
    layer = signing.cosign_layer(keys["ecdsa"], signing.cosign_payload(OTHER))
    assert _cosign(layer, _trust(tmp_path, keys["ecdsa"])) == Signature(
        "cosign", signing.key_id(keys["ecdsa"]), None, False, f"signs {OTHER}, not this image", IMAGE)


def test_a_tampered_cosign_payload_does_not_verify(tmp_path, keys):
    signature = signing.cosign_sign(keys["ecdsa"], signing.cosign_payload(OTHER))
    layer = signing.cosign_layer(keys["ecdsa"], signing.cosign_payload(IMAGE), signature=signature)
    result = _cosign(layer, _trust(tmp_path, keys["ecdsa"]))
    assert (result.verified, result.identity) == (False, None)
    assert result.problem == "none of the 1 trusted cosign keys verifies it"


def test_rsa_pss_is_not_how_cosign_signs_with_a_key_file(tmp_path, keys):
    key = keys["rsa"]
    assert isinstance(key, rsa.RSAPrivateKey)
    payload = signing.cosign_payload(IMAGE)
    pss = key.sign(payload, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
    assert not _cosign(signing.cosign_layer(key, payload, signature=pss), _trust(tmp_path, key)).verified


@pytest.mark.parametrize(("payload", "problem"), [
    (b"not json", "the signed payload is not JSON"),
    (b"\xff\xfe", "the signed payload is not JSON"),
    (b"[]", "the signed payload is not a cosign container image signature"),
    (signing.cosign_payload(IMAGE, kind="something else"), "the signed payload is not a cosign container image"),
    (json.dumps({"critical": {"type": "cosign container image signature"}}).encode(),
     "the signed payload names no image digest"),
    (signing.cosign_payload("sha256:../../etc"), "the signed payload names no image digest"),
])
def test_a_signed_payload_that_is_not_a_cosign_claim_does_not_verify(tmp_path, keys, payload, problem):
    result = _cosign(signing.cosign_layer(keys["ecdsa"], payload), _trust(tmp_path, keys["ecdsa"]))
    assert not result.verified
    assert result.identity == signing.key_id(keys["ecdsa"])
    assert result.problem is not None and result.problem.startswith(problem)


@pytest.mark.parametrize(("annotation", "problem"), [
    ("", "the layer carries no signature"),
    ("%%%not base64", "the signature annotation is not base64"),
    ("é", "the signature annotation is not base64"),
])
def test_an_unreadable_signature_annotation_is_a_clean_problem(tmp_path, keys, annotation, problem):
    layer = signing.layer(COSIGN_SIGNATURE, signing.cosign_payload(IMAGE),
                          {signatures.COSIGN_ANNOTATION: annotation} if annotation else {})
    assert _cosign(layer, _trust(tmp_path, keys["ecdsa"])).problem == problem


def test_an_oversized_signature_layer_is_refused_unread(tmp_path, keys):
    layer = signing.cosign_layer(keys["ecdsa"], b" " * (MAX_SIGNATURE_BYTES + 1))
    assert "more than a signature layer may hold" in (_cosign(layer, _trust(tmp_path, keys["ecdsa"])).problem or "")


def test_an_unusable_key_file_is_the_users_error(tmp_path, keys):
    layer = signing.cosign_layer(keys["ecdsa"], signing.cosign_payload(IMAGE))
    with pytest.raises(PinguardError, match=r"missing\.pub: not a readable PEM public key"):
        _cosign(layer, Trust(keys=(tmp_path / "missing.pub",)))
    garbage = tmp_path / "garbage.pub"
    garbage.write_text("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
    with pytest.raises(PinguardError, match=r"garbage\.pub: not a readable PEM public key"):
        _cosign(layer, Trust(keys=(garbage,)))
    x = tmp_path / "x25519.pub"
    x.write_bytes(x25519.X25519PrivateKey.generate().public_key().public_bytes(Encoding.PEM,
                                                                              PublicFormat.SubjectPublicKeyInfo))
    with pytest.raises(PinguardError, match="only ECDSA, Ed25519 and RSA keys"):
        _cosign(layer, Trust(keys=(x,)))


def test_layers_that_are_not_signatures_are_left_to_others(tmp_path, keys):
    attestation = signing.dsse_layer(signing.dsse(b"{}", keys["ecdsa"]), "https://slsa.dev/provenance/v0.2")
    assert verify(signing.artifact(IMAGE, "application/vnd.dsse.envelope.v1+json", attestation), IMAGE,
                  _trust(tmp_path, keys["ecdsa"])) == []


# --- DSSE -------------------------------------------------------------------------------------------


def test_pae_matches_the_dsse_specification_example():
    assert signatures.pae("http://example.com/HelloWorld", b"hello world") == \
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    assert signatures.pae("http://example.com/HelloWorld", b"hello world") == \
        signing.pae("http://example.com/HelloWorld", b"hello world")


@pytest.mark.parametrize("url_safe", [False, True])
def test_a_dsse_envelope_names_the_trusted_key_that_signed_it(tmp_path, keys, url_safe):
    payload = b'{"_type": "x"}' + bytes(range(256))  # bytes that differ between the two alphabets
    envelope = signing.dsse(payload, keys["rsa"], keys["ecdsa"], url_safe=url_safe)
    opened = signatures.open_dsse(envelope, _trust(tmp_path, keys["ecdsa"]))
    assert opened == signatures.Dsse("application/vnd.in-toto+json", payload, signing.key_id(keys["ecdsa"]))
    assert signatures.open_dsse(envelope, _trust(tmp_path, keys["ed25519"])).signer is None


@pytest.mark.parametrize(("envelope", "problem"), [
    (b"{", "the DSSE envelope is not JSON"),
    (b"[]", "not a DSSE envelope"),
    (b'{"payloadType": "t", "payload": "!!", "signatures": []}', "the DSSE payload is not base64"),
    (b'{"payloadType": "t", "payload": "e30=", "signatures": [{"sig": "%"}]}', "a DSSE signature is not base64"),
    (b'{"payloadType": "\\ud800", "payload": "e30=", "signatures": []}', "not a DSSE envelope"),
])
def test_an_unreadable_dsse_envelope_raises_unreadable(envelope, problem):
    with pytest.raises(Unreadable, match=problem):
        signatures.open_dsse(envelope, Trust())


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300), annotation=st.text(max_size=40))
def test_arbitrary_bytes_never_raise(data, annotation):
    cosign = signing.layer(COSIGN_SIGNATURE, data, {signatures.COSIGN_ANNOTATION: annotation})
    notation = signing.layer(signing.JWS, data)
    for artifact in (signing.artifact(IMAGE, COSIGN_SIGNATURE, cosign),
                     signing.artifact(IMAGE, NOTATION_SIGNATURE, notation)):
        assert all(not s.verified for s in verify(artifact, IMAGE, Trust(), NOW))
