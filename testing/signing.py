"""Keys, a certificate authority and signed provenance, all made in the test run (no network).

- cosign: public key files, simple-signing payloads and their signature layers (`cosign_layer`);
- DSSE envelopes (`dsse`) over in-toto statements (`statement`, SLSA and SBOM predicates);
- Notation: a CA chain (`root_ca`, `issue`) and JWS envelopes signed by its leaf (`notation_jws`);
- Sigstore: a CA, a transparency log and a CT log made here (`LocalSigstore`), whose bundles carry
  every proof the `sigstore` library checks, for keyless signatures verified offline.

Signing here is written from the specifications, apart from the code under test, so that a
misreading on one side shows up as a failing test rather than agreeing with itself.
"""
from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed, decode_dss_signature
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID

from pinguard.provenance.evidence import (
    COSIGN_ATTESTATION,
    COSIGN_SIGNATURE,
    IN_TOTO,
    NOTATION_SIGNATURE,
    SIGSTORE_BUNDLE,
    Artifact,
    Layer,
)

SigningKey = ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey | rsa.RSAPrivateKey
CertificateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey

NOW = dt.datetime(2025, 6, 1, 12, 0, tzinfo=dt.UTC)
JWS = "application/jose+json"
NOTATION_PAYLOAD = "application/vnd.cncf.notary.payload.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CODE_SIGNING = (ExtendedKeyUsageOID.CODE_SIGNING,)
_HASHES: dict[str, hashes.HashAlgorithm] = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def layer(media_type: str, data: bytes, annotations: Mapping[str, str] | None = None) -> Layer:
    return Layer(media_type, digest_of(data), dict(annotations or {}), data)


def artifact(subject: str, artifact_type: str, *layers: Layer, found_by: str = "referrers") -> Artifact:
    manifest = json.dumps({"layers": [x.digest for x in layers]}).encode()
    return Artifact(subject, artifact_type, digest_of(manifest), {}, tuple(layers), found_by)


# --- keys and cosign --------------------------------------------------------------------------------


def new_key(kind: str) -> SigningKey:
    """`ecdsa` (P-256), `ecdsa-p384`, `ed25519`, `rsa` (2048 bits) or `rsa-3072` / `rsa-4096`."""
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    if kind.startswith("rsa"):
        return rsa.generate_private_key(65537, int(kind.partition("-")[2] or 2048))
    return ec.generate_private_key(ec.SECP384R1() if kind == "ecdsa-p384" else ec.SECP256R1())


def public_pem(key: SigningKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def write_public_key(key: SigningKey, path: Path) -> Path:
    path.write_bytes(public_pem(key))
    return path


def key_id(key: SigningKey) -> str:
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(der).hexdigest()


def cosign_sign(key: SigningKey, data: bytes) -> bytes:
    """As `cosign sign --key`: SHA-256 for ECDSA (DER) and RSA (PKCS#1 v1.5); Ed25519 signs the bytes."""
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key.sign(data)
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    return key.sign(data, ec.ECDSA(hashes.SHA256()))


def cosign_payload(digest: str, reference: object = "registry.example/team/app",
                   kind: str = "cosign container image signature") -> bytes:
    """The simple-signing payload cosign signs for an image; `reference` None leaves `identity` out."""
    identity = {} if reference is None else {"identity": {"docker-reference": reference}}
    document = {
        "critical": {**identity, "image": {"docker-manifest-digest": digest}, "type": kind},
        "optional": None,
    }
    return json.dumps(document, separators=(",", ":")).encode()


def cosign_layer(key: SigningKey, payload: bytes, *, signature: bytes | None = None) -> Layer:
    """A `.sig` layer: the payload, with the base64 of its signature (by default, `key`'s) as annotation."""
    signed = cosign_sign(key, payload) if signature is None else signature
    return layer(COSIGN_SIGNATURE, payload, {"dev.cosignproject.cosign/signature": base64.b64encode(signed).decode()})


# --- in-toto and DSSE -------------------------------------------------------------------------------


def statement(subjects: Sequence[str], predicate_type: str, predicate: object, *, version: str = "v1") -> bytes:
    """An in-toto statement (`version` v0.1 or v1) about every digest of `subjects`."""
    document = {
        "_type": f"https://in-toto.io/Statement/{version}",
        "subject": [{"name": f"subject-{n}", "digest": {d.partition(":")[0]: d.partition(":")[2]}}
                    for n, d in enumerate(subjects)],
        "predicateType": predicate_type,
        "predicate": predicate,
    }
    return json.dumps(document, indent=2).encode()


def pae(payload_type: str, payload: bytes) -> bytes:
    """"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal."""
    return b" ".join([b"DSSEv1", str(len(payload_type.encode())).encode(), payload_type.encode(),
                      str(len(payload)).encode(), payload])


def dsse(payload: bytes, *keys: SigningKey, payload_type: str = IN_TOTO, url_safe: bool = False) -> bytes:
    """A DSSE envelope as cosign attests: one signature per key over the PAE of the payload."""
    encode = base64.urlsafe_b64encode if url_safe else base64.b64encode
    signatures = [{"keyid": "", "sig": encode(cosign_sign(k, pae(payload_type, payload))).decode()} for k in keys]
    envelope = {"payloadType": payload_type, "payload": encode(payload).decode(), "signatures": signatures}
    return json.dumps(envelope).encode()


def dsse_layer(envelope: bytes, predicate_type: str) -> Layer:
    annotations = {"dev.cosignproject.cosign/signature": "", "predicateType": predicate_type}
    return layer(COSIGN_ATTESTATION, envelope, annotations)


def in_toto_layer(data: bytes, predicate_type: str) -> Layer:
    """A BuildKit attestation layer: the raw statement, its predicate type as annotation."""
    return layer(IN_TOTO, data, {"in-toto.io/predicate-type": predicate_type})


def slsa_v02_buildkit(*, uri: str | None = "https://github.com/acme/trainer.git#refs/tags/v1.2.0",
                      sha1: str = "4b220de5058abfd01ff619c9d2ff6b09a049bea0",
                      vcs: Mapping[str, str] | None = None) -> dict[str, Any]:
    """BuildKit's v0.2 provenance: a Git context in configSource, or (uri None) a local one with vcs hints."""
    config: dict[str, Any] = {"entryPoint": "Dockerfile"}
    if uri:
        config |= {"uri": uri, "digest": {"sha1": sha1}}
    metadata: dict[str, Any] = {
        "buildInvocationID": "rpv7a389uzil5lqmrgwhijwjz",
        "buildStartedOn": "2025-05-30T10:00:00Z",
        "buildFinishedOn": "2025-05-30T10:07:30Z",
        "completeness": {"parameters": False, "environment": True, "materials": False},
    }
    if vcs:
        metadata["https://mobyproject.org/buildkit@v1#metadata"] = {"vcs": dict(vcs)}
    return {
        "builder": {"id": "https://github.com/acme/trainer/actions/runs/3709599520"},
        "buildType": "https://mobyproject.org/buildkit@v1",
        "invocation": {"configSource": config, "parameters": {"frontend": "dockerfile.v0"},
                       "environment": {"platform": "linux/amd64"}},
        "materials": [{"uri": "pkg:docker/python@3.12-slim?platform=linux%2Famd64",
                       "digest": {"sha256": "8914eb54f968791faf6a8638949e480fef81e697984fba772b3976835194c6d4"}}],
        "metadata": metadata,
    }


def slsa_v1_github(repository: str = "https://github.com/acme/trainer",
                   commit: str = "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d") -> dict[str, Any]:
    """actions/attest-build-provenance's v1 predicate (build type actions.github.io/buildtypes/workflow/v1)."""
    return {
        "buildDefinition": {
            "buildType": "https://actions.github.io/buildtypes/workflow/v1",
            "externalParameters": {"workflow": {"ref": "refs/heads/main", "repository": repository,
                                                "path": ".github/workflows/image.yml"}},
            "internalParameters": {"github": {"event_name": "push", "runner_environment": "github-hosted"}},
            "resolvedDependencies": [{"uri": f"git+{repository}@refs/heads/main", "digest": {"gitCommit": commit}}],
        },
        "runDetails": {
            "builder": {"id": "https://github.com/actions/runner/github-hosted"},
            "metadata": {"invocationId": f"{repository}/actions/runs/1/attempts/1"},
        },
    }


def slsa_v1_buildkit(*, config_source: Mapping[str, Any] | None = None,
                     vcs: Mapping[str, str] | None = None) -> dict[str, Any]:
    """BuildKit's v1 predicate: configSource for a Git context, buildkit_metadata.vcs for a local one."""
    external: dict[str, Any] = {"request": {"frontend": "dockerfile.v0"}}
    if config_source is not None:
        external["configSource"] = dict(config_source)
    metadata: dict[str, Any] = {"invocationID": "rpv7a389uzil5lqmrgwhijwjz",
                                "startedOn": "2025-05-30T10:00:00Z", "finishedOn": "2025-05-30T10:07:30Z"}
    if vcs:
        metadata["buildkit_metadata"] = {"vcs": dict(vcs)}
    return {
        "buildDefinition": {
            "buildType": "https://github.com/moby/buildkit/blob/master/docs/attestations/slsa-definitions.md",
            "externalParameters": external,
            "resolvedDependencies": [{"uri": "pkg:docker/python@3.12-slim?platform=linux%2Famd64",
                                      "digest": {"sha256": "89" * 32}}],
        },
        "runDetails": {"builder": {"id": "https://github.com/acme/trainer/actions/runs/3709599520"},
                       "metadata": metadata},
    }


def spdx_document(packages: int) -> dict[str, Any]:
    return {
        "spdxVersion": "SPDX-2.3",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": "trainer",
        "packages": [{"name": f"package-{n}", "SPDXID": f"SPDXRef-Package-{n}"} for n in range(packages)],
    }


def spdx_tag_value(packages: int) -> bytes:
    lines = ["SPDXVersion: SPDX-2.3", "DataLicense: CC0-1.0", "DocumentName: trainer"]
    for n in range(packages):
        lines += ["", f"PackageName: package-{n}", f"SPDXID: SPDXRef-Package-{n}"]
    return "\n".join(lines).encode()


def cyclonedx_bom(*components: dict[str, Any]) -> dict[str, Any]:
    return {"bomFormat": "CycloneDX", "specVersion": "1.5", "components": list(components)}


def component(name: str, *nested: dict[str, Any]) -> dict[str, Any]:
    return {"type": "library", "name": name, **({"components": list(nested)} if nested else {})}


# --- a certificate authority and Notation -----------------------------------------------------------


@dataclass(frozen=True)
class Issued:
    key: CertificateKey
    certificate: x509.Certificate

    @property
    def der(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.DER)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))
        return path


def key_usage(*, signing: bool = False, certificates: bool = False, encipherment: bool = False) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=signing, content_commitment=False, key_encipherment=encipherment,
                         data_encipherment=False, key_agreement=False, key_cert_sign=certificates,
                         crl_sign=certificates, encipher_only=False, decipher_only=False)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(name: str, key: CertificateKey, issuer: Issued | None, *, ca: bool, path_length: int | None,
                 usage: x509.KeyUsage | None, purposes: Sequence[x509.ObjectIdentifier] | None,
                 valid: tuple[dt.datetime, dt.datetime]) -> Issued:
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(issuer.certificate.subject if issuer else _name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0])
        .not_valid_after(valid[1])
        .add_extension(x509.BasicConstraints(ca=ca, path_length=path_length), critical=True)
    )
    if usage is not None:
        builder = builder.add_extension(usage, critical=True)
    if purposes:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(purposes)), critical=False)
    return Issued(key, builder.sign(issuer.key if issuer else key, hashes.SHA256()))


def _default_validity(ca: bool) -> tuple[dt.datetime, dt.datetime]:
    """A month-old leaf good for a year; CAs valid for years either side of `NOW`."""
    if ca:
        return NOW - dt.timedelta(days=3 * 365), NOW + dt.timedelta(days=3 * 365)
    return NOW - dt.timedelta(days=30), NOW + dt.timedelta(days=365)


def root_ca(name: str = "Acme Root CA") -> Issued:
    return _certificate(name, ec.generate_private_key(ec.SECP384R1()), None, ca=True, path_length=None,
                        usage=key_usage(certificates=True), purposes=None, valid=_default_validity(ca=True))


def issue(issuer: Issued, name: str, *, key: CertificateKey | None = None, ca: bool = False,
          path_length: int | None = None, usage: x509.KeyUsage | None = None,
          purposes: Sequence[x509.ObjectIdentifier] | None = CODE_SIGNING,
          valid: tuple[dt.datetime, dt.datetime] | None = None) -> Issued:
    """A certificate signed by `issuer`: an intermediate CA (`ca`) or, by default, a code-signing leaf."""
    default_usage = key_usage(certificates=True) if ca else key_usage(signing=True)
    return _certificate(name, key or ec.generate_private_key(ec.SECP256R1()), issuer, ca=ca,
                        path_length=path_length, usage=usage or default_usage, purposes=None if ca else purposes,
                        valid=valid or _default_validity(ca))


def self_signed_leaf(name: str = "Acme Signer", key: CertificateKey | None = None) -> Issued:
    """A code-signing certificate that is its own root (as `notation cert generate-test` makes)."""
    return _certificate(name, key or ec.generate_private_key(ec.SECP256R1()), None, ca=False, path_length=None,
                        usage=key_usage(signing=True), purposes=CODE_SIGNING, valid=_default_validity(ca=False))


def jws_algorithm(key: CertificateKey) -> str:
    if isinstance(key, rsa.RSAPrivateKey):
        return {2048: "PS256", 3072: "PS384", 4096: "PS512"}[key.key_size]
    return {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}[key.curve.name]


def jws_sign(key: CertificateKey, algorithm: str, data: bytes) -> bytes:
    """RFC 7518: PSS with MGF1 and a salt as long as the hash; ECDSA as R then S, each the curve's size."""
    digest = _HASHES[algorithm[2:]]
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(data, padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
    r, s = decode_dss_signature(key.sign(data, ec.ECDSA(digest)))
    size = (key.curve.key_size + 7) // 8
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def notation_payload(digest: str) -> bytes:
    return json.dumps({"targetArtifact": {"mediaType": OCI_MANIFEST, "digest": digest, "size": 1234}}).encode()


def notation_header(*, signing_time: dt.datetime = NOW - dt.timedelta(hours=1), expiry: dt.datetime | None = None,
                    authority: bool = False, **extra: object) -> dict[str, object]:
    """A protected header (without `alg`) as `notation sign` writes it; `extra` adds or replaces entries."""
    scheme, time_header = (("notary.x509.signingAuthority", "io.cncf.notary.authenticSigningTime") if authority
                           else ("notary.x509", "io.cncf.notary.signingTime"))
    header: dict[str, object] = {"cty": NOTATION_PAYLOAD, "io.cncf.notary.signingScheme": scheme,
                                 time_header: signing_time.strftime("%Y-%m-%dT%H:%M:%SZ")}
    critical = ["io.cncf.notary.signingScheme"] + ([time_header] if authority else [])
    if expiry is not None:
        header["io.cncf.notary.expiry"] = expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
        critical.append("io.cncf.notary.expiry")
    return header | {"crit": critical} | extra


def notation_jws(signer: Issued, chain: Sequence[Issued], payload: bytes, *,
                 header: Mapping[str, object] | None = None, algorithm: str | None = None,
                 signing_key: CertificateKey | None = None) -> bytes:
    """A flattened JWS envelope: `signer` (or `signing_key`) signs, `chain` goes into x5c as given."""
    protected = b64url(json.dumps({"alg": algorithm or jws_algorithm(signer.key), **(header or notation_header())})
                       .encode())
    encoded_payload = b64url(payload)
    key = signing_key or signer.key
    signature = jws_sign(key, jws_algorithm(key), f"{protected}.{encoded_payload}".encode())
    return json.dumps({
        "payload": encoded_payload,
        "protected": protected,
        "header": {"x5c": [base64.b64encode(c.der).decode() for c in chain],
                   "io.cncf.notary.signingAgent": "notation-go/1.3.0"},
        "signature": b64url(signature),
    }).encode()


def notation_artifact(subject: str, envelope: bytes, media_type: str = JWS) -> Artifact:
    return artifact(subject, NOTATION_SIGNATURE, layer(media_type, envelope))


# --- a Sigstore: CA, transparency log and CT log, for keyless bundles verified offline ---------------

Json = dict[str, Any]
SIGSTORE_TIME = dt.datetime(2025, 6, 2, 9, 30, tzinfo=dt.UTC)  # when its certificate was issued and logged
SIGSTORE_IDENTITY = "https://github.com/example/trainer/.github/workflows/release.yml@refs/heads/main"
SIGSTORE_SIGNER = x509.UniformResourceIdentifier(SIGSTORE_IDENTITY)
SIGSTORE_ISSUER = "https://token.actions.githubusercontent.com"
FULCIO_ISSUER_OID = "1.3.6.1.4.1.57264.1.8"  # a DER UTF8String


def fulcio_issuer(issuer: str = SIGSTORE_ISSUER) -> x509.UnrecognizedExtension:
    """The certificate extension Fulcio records the OIDC issuer in."""
    return x509.UnrecognizedExtension(x509.ObjectIdentifier(FULCIO_ISSUER_OID), der(0x0C, issuer.encode()))


def _p256() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())

def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def spki(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def der(tag: int, content: bytes) -> bytes:
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
    """A CA, a transparency log and a CT log, and one certificate the CA issued to an identity."""

    ca: x509.Certificate
    certificate: x509.Certificate
    ct_key: ec.EllipticCurvePrivateKey
    log_key: ec.EllipticCurvePrivateKey
    signer_key: ec.EllipticCurvePrivateKey

    @classmethod
    def create(cls, issuer_extension: x509.UnrecognizedExtension,
               identity: x509.GeneralName = SIGSTORE_SIGNER) -> LocalSigstore:
        ca_key, ct_key, log_key, signer_key = (_p256() for _ in range(4))
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test sigstore CA")])
        ca = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(ca_key.public_key())
            .serial_number(1).not_valid_before(SIGSTORE_TIME - dt.timedelta(days=30))
            .not_valid_after(SIGSTORE_TIME + dt.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        leaf = (
            x509.CertificateBuilder().subject_name(x509.Name([])).issuer_name(name)
            .public_key(signer_key.public_key()).serial_number(2)
            .not_valid_before(SIGSTORE_TIME - dt.timedelta(minutes=1))
            .not_valid_after(SIGSTORE_TIME + dt.timedelta(minutes=9))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
            .add_extension(x509.SubjectAlternativeName([identity]), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .add_extension(issuer_extension, critical=False)
        )
        sct_list = _sct_list(leaf.sign(ca_key, hashes.SHA256()).tbs_certificate_bytes, ca_key, ct_key)
        certificate = leaf.add_extension(
            x509.UnrecognizedExtension(ExtensionOID.PRECERT_SIGNED_CERTIFICATE_TIMESTAMPS, der(0x04, sct_list)),
            critical=False,
        ).sign(ca_key, hashes.SHA256())
        return cls(ca, certificate, ct_key, log_key, signer_key)

    def trusted_root(self) -> Json:
        def log(key: ec.EllipticCurvePrivateKey, url: str) -> Json:
            return {
                "baseUrl": url, "hashAlgorithm": "SHA2_256",
                "publicKey": {"rawBytes": b64(spki(key)), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                              "validFor": {"start": "2025-01-01T00:00:00Z"}},
                "logId": {"keyId": b64(hashlib.sha256(spki(key)).digest())},
            }

        return {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(self.log_key, "https://log.test")],
            "ctlogs": [log(self.ct_key, "https://ct.test")],
            "certificateAuthorities": [{
                "subject": {"organization": "test", "commonName": "test sigstore CA"},
                "uri": "https://ca.test",
                "certChain": {"certificates": [{"rawBytes": b64(self.ca.public_bytes(serialization.Encoding.DER))}]},
                "validFor": {"start": "2025-01-01T00:00:00Z"},
            }],
        }

    def dsse_bundle(self, statement: Json | bytes, payload_type: str = IN_TOTO) -> Json:
        """What `cosign sign` writes in the bundle format: a DSSE envelope around an in-toto statement."""
        payload = statement if isinstance(statement, bytes) else json.dumps(statement).encode()
        pae = b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type.encode(), len(payload), payload)
        signature = self.signer_key.sign(pae, ec.ECDSA(hashes.SHA256()))
        envelope = {"payload": b64(payload), "payloadType": payload_type, "signatures": [{"sig": b64(signature)}]}
        body = {"apiVersion": "0.0.1", "kind": "dsse", "spec": {
            "envelopeHash": {"algorithm": "sha256", "value": hashlib.sha256(_canonical(envelope)).hexdigest()},
            "payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(payload).hexdigest()},
            "signatures": [{"signature": b64(signature), "verifier": b64(self._pem())}],
        }}
        return self._bundle("dsse", body, {"dsseEnvelope": envelope})

    def message_bundle(self, digest: str) -> Json:
        """A message signature over an image: the manifest's digest is the message, already hashed."""
        hashed = bytes.fromhex(digest.removeprefix("sha256:"))
        signature = self.signer_key.sign(hashed, ec.ECDSA(Prehashed(hashes.SHA256())))
        body = {"apiVersion": "0.0.1", "kind": "hashedrekord", "spec": {
            "data": {"hash": {"algorithm": "sha256", "value": hashed.hex()}},
            "signature": {"content": b64(signature), "publicKey": {"content": b64(self._pem())}},
        }}
        message = {"messageDigest": {"algorithm": "SHA2_256", "digest": b64(hashed)}, "signature": b64(signature)}
        return self._bundle("hashedrekord", body, {"messageSignature": message})

    def _pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def _bundle(self, kind: str, body: Json, content: Json) -> Json:
        """The bundle around `content`, logged as entry 0 of a one-entry log: the leaf is the root."""
        logged = _canonical(body)
        log_id = hashlib.sha256(spki(self.log_key)).digest()
        root = hashlib.sha256(b"\x00" + logged).digest()
        note = f"log.test - 1\n1\n{b64(root)}\n"
        note_signature = self.log_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        integrated = int(SIGSTORE_TIME.timestamp())
        promise = _canonical({"body": b64(logged), "integratedTime": integrated, "logID": log_id.hex(), "logIndex": 0})
        return {
            "mediaType": SIGSTORE_BUNDLE,
            "verificationMaterial": {
                "certificate": {"rawBytes": b64(self.certificate.public_bytes(serialization.Encoding.DER))},
                "tlogEntries": [{
                    "logIndex": "0", "logId": {"keyId": b64(log_id)},
                    "kindVersion": {"kind": kind, "version": "0.0.1"},
                    "integratedTime": str(integrated),
                    "inclusionPromise": {
                        "signedEntryTimestamp": b64(self.log_key.sign(promise, ec.ECDSA(hashes.SHA256())))},
                    "inclusionProof": {
                        "logIndex": "0", "rootHash": b64(root), "treeSize": "1", "hashes": [],
                        "checkpoint": {"envelope": f"{note}\n\u2014 log.test {b64(log_id[:4] + note_signature)}\n"},
                    },
                    "canonicalizedBody": b64(logged),
                }],
            },
            **content,
        }


def _sct_list(tbs_precertificate: bytes, ca_key: ec.EllipticCurvePrivateKey,
              ct_key: ec.EllipticCurvePrivateKey) -> bytes:
    """An RFC 6962 SCT list holding the CT log's timestamp over the precertificate."""
    millis = int(SIGSTORE_TIME.timestamp() * 1000)
    # v1, a certificate timestamp, when, a precertificate entry: its issuer's key hash and TBS; no extensions
    signed = (struct.pack("!BBQH", 0, 0, millis, 1) + hashlib.sha256(spki(ca_key)).digest()
              + len(tbs_precertificate).to_bytes(3, "big") + tbs_precertificate + b"\x00\x00")
    signature = ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
    # v1, the log's id, when, no extensions, then the signature: SHA-256 (4) with ECDSA (3)
    sct = (b"\x00" + hashlib.sha256(spki(ct_key)).digest() + struct.pack("!QH", millis, 0)
           + struct.pack("!BBH", 4, 3, len(signature)) + signature)
    return struct.pack("!HH", len(sct) + 2, len(sct)) + sct
