"""Notation signatures (JWS): verified to a trusted certificate, with every check Notation's own verifier makes."""
from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from pinguard.errors import PinguardError
from pinguard.provenance.evidence import Signature
from pinguard.provenance.notation import NOTATION_COSE
from pinguard.provenance.signatures import verify
from pinguard.provenance.trust import Trust
from testing import signing
from testing.signing import NOW

IMAGE = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64


@pytest.fixture(scope="module")
def pki() -> dict[str, signing.Issued]:
    root = signing.root_ca()
    intermediate = signing.issue(root, "Acme Signing CA", ca=True, path_length=0)
    return {"root": root, "intermediate": intermediate, "leaf": signing.issue(intermediate, "Acme Trainer Signer")}


def _chain(pki: dict[str, signing.Issued]) -> list[signing.Issued]:
    return [pki["leaf"], pki["intermediate"], pki["root"]]


def _notation(envelope: bytes, anchors: list[signing.Issued], tmp_path: Path, *, subject: str = IMAGE,
              now: dt.datetime = NOW, authorities: tuple[signing.Issued, ...] = ()) -> Signature:
    trust = Trust(notation_certs=tuple(a.write(tmp_path / f"ca{n}.pem") for n, a in enumerate(anchors)),
                  notation_authorities=tuple(a.write(tmp_path / f"sa{n}.pem") for n, a in enumerate(authorities)))
    [signature] = verify(signing.notation_artifact(subject, envelope), subject, trust, now)
    return signature


def test_a_notation_signature_verifies_to_a_trusted_root(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE))
    assert _notation(envelope, [pki["root"]], tmp_path) == Signature(
        "notation", "CN=Acme Trainer Signer,O=Acme", "CN=Acme Signing CA,O=Acme", True, subject=IMAGE)


def test_a_trusted_intermediate_is_enough(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE))
    assert _notation(envelope, [pki["intermediate"]], tmp_path).verified


@pytest.mark.parametrize("kind", ["rsa", "rsa-3072", "ecdsa-p384"])
def test_each_notation_algorithm_verifies(tmp_path, pki, kind):
    key = signing.new_key(kind)
    assert isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey)
    leaf = signing.issue(pki["intermediate"], "Acme Signer", key=key)
    envelope = signing.notation_jws(leaf, [leaf, pki["intermediate"], pki["root"]], signing.notation_payload(IMAGE))
    assert _notation(envelope, [pki["root"]], tmp_path).verified


def test_unprintable_certificate_names_are_escaped(tmp_path):
    leaf = signing.self_signed_leaf("Evil\nSigner\x1b[31m")
    envelope = signing.notation_jws(leaf, [leaf], signing.notation_payload(IMAGE))
    assert _notation(envelope, [], tmp_path).identity == "CN=Evil\\nSigner\\x1b[31m,O=Acme"


def test_a_self_signed_signing_certificate_is_its_own_root(tmp_path):
    leaf = signing.self_signed_leaf()
    envelope = signing.notation_jws(leaf, [leaf], signing.notation_payload(IMAGE))
    assert _notation(envelope, [leaf], tmp_path).verified


def test_an_untrusted_ca_does_not_verify(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE))
    signature = _notation(envelope, [signing.root_ca("Someone Else")], tmp_path)
    assert signature == Signature("notation", "CN=Acme Trainer Signer,O=Acme", "CN=Acme Signing CA,O=Acme", False,
                                  "no certificate of its chain is a trusted Notation certificate", IMAGE)
    assert _notation(envelope, [], tmp_path).problem == signature.problem


def test_a_chain_pretending_to_come_from_the_trusted_root_does_not_verify(tmp_path, pki):
    impostor = signing.root_ca("Acme Root CA")  # same name, another key
    leaf = signing.issue(impostor, "Acme Trainer Signer")
    envelope = signing.notation_jws(leaf, [leaf, pki["root"]], signing.notation_payload(IMAGE))
    assert _notation(envelope, [pki["root"]], tmp_path).problem == \
        "certificate CN=Acme Trainer Signer,O=Acme is not issued by CN=Acme Root CA,O=Acme"


def test_a_chain_without_its_root_does_not_verify(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], [pki["leaf"], pki["intermediate"]], signing.notation_payload(IMAGE))
    assert _notation(envelope, [pki["intermediate"]], tmp_path).problem == \
        "certificate CN=Acme Signing CA,O=Acme is not self-signed, so the chain has no root"


def test_a_signature_for_another_digest_does_not_verify(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(OTHER))
    assert _notation(envelope, [pki["root"]], tmp_path).problem == f"signs {OTHER}, not this image"


def test_a_tampered_notation_payload_does_not_verify(tmp_path, pki):
    envelope = json.loads(signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(OTHER)))
    envelope["payload"] = signing.b64url(signing.notation_payload(IMAGE))
    assert _notation(json.dumps(envelope).encode(), [pki["root"]], tmp_path).problem == \
        "the signature does not match its payload and headers"


def test_a_tampered_header_does_not_verify(tmp_path, pki):
    envelope = json.loads(signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE)))
    header = json.loads(base64.urlsafe_b64decode(envelope["protected"] + "=="))
    envelope["protected"] = signing.b64url(json.dumps(header | {"io.cncf.notary.signingTime": "2020-01-01T00:00:00Z"})
                                           .encode())
    assert not _notation(json.dumps(envelope).encode(), [pki["root"]], tmp_path).verified


def test_a_signature_by_another_key_than_the_certificates_does_not_verify(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE),
                                    signing_key=ec.generate_private_key(ec.SECP256R1()))
    assert _notation(envelope, [pki["root"]], tmp_path).problem == \
        "the signature does not match its payload and headers"


def test_alg_must_be_the_one_the_key_decides(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE), algorithm="ES384")
    assert _notation(envelope, [pki["root"]], tmp_path).problem == \
        "its alg header does not match the signing key, which signs ES256"


def test_an_expired_certificate_does_not_verify(tmp_path, pki):
    leaf = signing.issue(pki["intermediate"], "Old Signer",
                         valid=(NOW - dt.timedelta(days=400), NOW - dt.timedelta(days=35)))
    payload = signing.notation_payload(IMAGE)
    header = signing.notation_header(signing_time=NOW - dt.timedelta(days=40))
    envelope = signing.notation_jws(leaf, [leaf, pki["intermediate"], pki["root"]], payload, header=header)
    assert _notation(envelope, [pki["root"]], tmp_path).problem == (
        "certificate CN=Old Signer,O=Acme is valid from 2024-04-27T12:00:00Z to 2025-04-27T12:00:00Z, "
        "not at 2025-06-01T12:00:00Z")


def test_a_certificate_must_be_valid_when_it_signed(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE),
                                    header=signing.notation_header(signing_time=NOW - dt.timedelta(days=60)))
    assert "not at 2025-04-02T12:00:00Z" in (_notation(envelope, [pki["root"]], tmp_path).problem or "")


EXPIRED = "certificate CN=Old Signer,O=Acme is valid from 2024-04-27T12:00:00Z to 2025-04-27T12:00:00Z, not at "
NO_AUTHORITY = ("it claims an authentic signing time (notary.x509.signingAuthority), which only a trusted signing "
                "authority vouches for, and no certificate of its chain is one "
                "(provenance.notation-signing-authorities)")


@pytest.mark.parametrize(("scheme", "store", "problem"), [
    # Signed today by a certificate that expired in April, its time backdated into the certificate's validity:
    ("signingAuthority", "signingAuthority", None),  # a signing authority stamps the time: it is taken
    ("signingAuthority", "ca", NO_AUTHORITY),  # a CA's signer could backdate anything: Notation refuses it
    ("signingAuthority", "both", None),
    ("x509", "ca", EXPIRED + "2025-06-01T12:00:00Z"),  # its signing time is its word: it must be valid now
    ("x509", "signingAuthority", "no certificate of its chain is a trusted Notation certificate"),
])
def test_only_a_signing_authority_is_taken_at_its_word_for_when_it_signed(tmp_path, pki, scheme, store, problem):
    leaf = signing.issue(pki["intermediate"], "Old Signer",
                         valid=(NOW - dt.timedelta(days=400), NOW - dt.timedelta(days=35)))
    header = signing.notation_header(signing_time=NOW - dt.timedelta(days=40), authority=scheme == "signingAuthority")
    envelope = signing.notation_jws(leaf, [leaf, pki["intermediate"], pki["root"]], signing.notation_payload(IMAGE),
                                    header=header)
    cas = [pki["root"]] if store in ("ca", "both") else []
    authorities = (pki["root"],) if store in ("signingAuthority", "both") else ()
    signature = _notation(envelope, cas, tmp_path, authorities=authorities)
    assert (signature.verified, signature.problem) == (problem is None, problem)


def test_a_signing_authority_vouches_for_no_time_its_certificates_were_not_valid_at(tmp_path, pki):
    leaf = signing.issue(pki["intermediate"], "Old Signer",
                         valid=(NOW - dt.timedelta(days=400), NOW - dt.timedelta(days=35)))
    header = signing.notation_header(signing_time=NOW - dt.timedelta(days=1), authority=True)
    envelope = signing.notation_jws(leaf, [leaf, pki["intermediate"], pki["root"]], signing.notation_payload(IMAGE),
                                    header=header)
    assert _notation(envelope, [], tmp_path, authorities=(pki["root"],)).problem == EXPIRED + "2025-05-31T12:00:00Z"


def test_a_valid_signing_authority_signature_needs_the_authority_trusted_as_one(tmp_path, pki):
    header = signing.notation_header(authority=True)
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE), header=header)
    assert _notation(envelope, [pki["root"]], tmp_path).problem == NO_AUTHORITY
    assert _notation(envelope, [], tmp_path, authorities=(pki["intermediate"],)).verified


def test_an_expired_signature_does_not_verify(tmp_path, pki):
    header = signing.notation_header(expiry=NOW - dt.timedelta(minutes=1))
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE), header=header)
    assert _notation(envelope, [pki["root"]], tmp_path).problem == "the signature expired at 2025-06-01T11:59:00Z"
    header = signing.notation_header(expiry=NOW + dt.timedelta(days=1))
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE), header=header)
    assert _notation(envelope, [pki["root"]], tmp_path).verified


@pytest.mark.parametrize(("extra", "problem"), [
    ({"cty": "application/json"}, "its payload is not application/vnd.cncf.notary.payload.v1+json"),
    ({"crit": "io.cncf.notary.signingScheme"}, "the protected header's crit is not a list of names"),
    ({"crit": []}, "it carries a header that must be critical without marking it so"),
    ({"crit": ["io.cncf.notary.signingScheme", "com.example.policy"], "com.example.policy": "x"},
     "it has a critical header pinguard does not understand"),
    ({"crit": ["io.cncf.notary.signingScheme", "io.cncf.notary.expiry"]},
     "it marks as critical a header it does not carry"),
    ({"crit": ["io.cncf.notary.signingScheme", "io.cncf.notary.verificationPlugin"],
      "io.cncf.notary.verificationPlugin": "com.example.plugin"},
     "it needs a Notation verification plugin, which pinguard does not run"),
    ({"io.cncf.notary.signingScheme": "notary.default"},
     "its signing scheme is neither notary.x509 nor notary.x509.signingAuthority"),
    ({"io.cncf.notary.signingTime": "yesterday"}, "io.cncf.notary.signingTime is not an RFC 3339 time"),
    ({"io.cncf.notary.signingTime": "2025-06-01T10:00:00"}, "io.cncf.notary.signingTime is not an RFC 3339 time"),
])
def test_protected_headers_are_checked(tmp_path, pki, extra, problem):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE),
                                    header=signing.notation_header(**extra))
    assert _notation(envelope, [pki["root"]], tmp_path).problem == problem


def _leaf_problem(tmp_path: Path, pki: dict[str, signing.Issued], **options: object) -> str | None:
    leaf = signing.issue(pki["intermediate"], "Odd Signer", **options)
    envelope = signing.notation_jws(leaf, [leaf, pki["intermediate"], pki["root"]], signing.notation_payload(IMAGE))
    return _notation(envelope, [pki["root"]], tmp_path).problem


def test_the_signing_certificate_must_be_for_code_signing(tmp_path, pki):
    assert _leaf_problem(tmp_path, pki, purposes=[ExtendedKeyUsageOID.SERVER_AUTH]) == \
        "the signing certificate's extended key usage is not for code signing"
    assert _leaf_problem(tmp_path, pki, purposes=[ExtendedKeyUsageOID.CODE_SIGNING,
                                                  ExtendedKeyUsageOID.TIME_STAMPING]) == \
        "the signing certificate's extended key usage is not for code signing"
    assert _leaf_problem(tmp_path, pki, purposes=None) is None  # the extension is optional


def test_the_signing_certificate_must_only_sign(tmp_path, pki):
    assert _leaf_problem(tmp_path, pki, usage=signing.key_usage()) == \
        "the signing certificate's key usage is not marked critical for digital signatures"
    assert _leaf_problem(tmp_path, pki, usage=signing.key_usage(signing=True, encipherment=True)) == \
        "the signing certificate's key usage allows more than signing"


def test_a_ca_signing_certificate_is_refused(tmp_path, pki):
    leaf = signing.issue(pki["intermediate"], "CA Signer", ca=True, usage=signing.key_usage(signing=True))
    envelope = signing.notation_jws(leaf, [leaf, pki["intermediate"], pki["root"]], signing.notation_payload(IMAGE))
    assert _notation(envelope, [pki["root"]], tmp_path).problem == "the signing certificate is a CA"


def test_an_issuer_must_be_a_ca(tmp_path, pki):
    not_a_ca = signing.issue(pki["root"], "Not A CA", usage=signing.key_usage(signing=True, certificates=True))
    leaf = signing.issue(not_a_ca, "Signer")
    envelope = signing.notation_jws(leaf, [leaf, not_a_ca, pki["root"]], signing.notation_payload(IMAGE))
    assert _notation(envelope, [pki["root"]], tmp_path).problem == \
        "certificate CN=Not A CA,O=Acme issues certificates but has no critical CA basic constraints"


def test_a_path_length_constraint_holds(tmp_path, pki):
    deeper = signing.issue(pki["intermediate"], "Team CA", ca=True)  # the intermediate allows none below it
    leaf = signing.issue(deeper, "Signer")
    envelope = signing.notation_jws(leaf, [leaf, deeper, pki["intermediate"], pki["root"]],
                                    signing.notation_payload(IMAGE))
    assert _notation(envelope, [pki["root"]], tmp_path).problem == \
        "certificate CN=Acme Signing CA,O=Acme allows 0 intermediate CAs below it, the chain has 1"


def test_a_weak_ca_key_is_refused(tmp_path, pki):
    weak = signing.issue(pki["root"], "Weak CA", ca=True, key=rsa.generate_private_key(65537, 1024))
    leaf = signing.issue(weak, "Signer")
    envelope = signing.notation_jws(leaf, [leaf, weak, pki["root"]], signing.notation_payload(IMAGE))
    assert _notation(envelope, [pki["root"]], tmp_path).problem == \
        "certificate CN=Weak CA,O=Acme has a key too short for Notation"


def test_notation_keys_must_be_strong_enough(tmp_path, pki):
    weak = rsa.generate_private_key(65537, 1024)
    leaf = signing.issue(pki["intermediate"], "Weak Signer", key=weak)
    envelope = signing.notation_jws(leaf, [leaf, pki["intermediate"], pki["root"]], signing.notation_payload(IMAGE),
                                    algorithm="PS256", signing_key=pki["leaf"].key)
    assert _notation(envelope, [pki["root"]], tmp_path).problem == \
        "the signing certificate's key is not a size Notation signs with"


def test_cose_envelopes_are_reported_not_verified(tmp_path):
    [signature] = verify(signing.notation_artifact(IMAGE, b"\xd2\x84", NOTATION_COSE), IMAGE, Trust(), NOW)
    assert signature == Signature("notation", None, None, False, "COSE envelopes are not supported", IMAGE)


@pytest.mark.parametrize(("envelope", "problem"), [
    (b"\x00", "the JWS envelope is not JSON"),
    (b"[" * 100_000, "the JWS envelope is nested too deeply"),
    (b'{"payload": "e30", "protected": "e30", "signature": ""}',
     "the unprotected header's x5c is not a list of 1 to 10 certificates"),
    (b'{"signatures": []}', "not a flattened JWS envelope"),
    (b'{"payload": "e30", "protected": "W10", "signature": "", "header": {"x5c": ["AA=="]}}',
     "the protected header is not an object"),
    (b'{"payload": "e30", "protected": "e30", "signature": "", "header": {"x5c": ["not base64!"]}}',
     "an x5c certificate is not base64"),
    (b'{"payload": "e30", "protected": "e30", "signature": "", "header": {"x5c": ["AAAA"]}}',
     "an x5c certificate is not DER"),
])
def test_a_malformed_jws_is_a_clean_problem(tmp_path, envelope, problem):
    signature = _notation(envelope, [], tmp_path)
    assert (signature.verified, signature.identity) == (False, None)
    assert (signature.problem or "").startswith(problem)


@pytest.mark.parametrize(("field", "what"), [
    ("payload", "the JWS payload"), ("protected", "the protected header"), ("signature", "the JWS signature")])
@pytest.mark.parametrize(("text", "problem"), [("a+b/", "is not base64url"), ("a%b", "is not base64")])
def test_an_envelope_part_that_is_not_base64url_is_a_clean_problem(tmp_path, pki, field, what, text, problem):
    envelope = json.loads(signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE)))
    envelope[field] = text
    assert _notation(json.dumps(envelope).encode(), [pki["root"]], tmp_path).problem == f"{what} {problem}"


def test_an_unreadable_notation_certificate_file_is_the_users_error(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE))
    artifact = signing.notation_artifact(IMAGE, envelope)
    with pytest.raises(PinguardError, match=r"ca\.pem: not a readable PEM certificate"):
        verify(artifact, IMAGE, Trust(notation_certs=(tmp_path / "ca.pem",)), NOW)
    with pytest.raises(PinguardError, match=r"sa\.pem: not a readable PEM certificate"):
        verify(artifact, IMAGE, Trust(notation_authorities=(tmp_path / "sa.pem",)), NOW)


def test_notation_layers_count_only_in_notation_artifacts(tmp_path, pki):
    envelope = signing.notation_jws(pki["leaf"], _chain(pki), signing.notation_payload(IMAGE))
    other = signing.artifact(IMAGE, "application/vnd.example", signing.layer(signing.JWS, envelope))
    assert verify(other, IMAGE, Trust(), NOW) == []
