"""Hostile provenance: what `lock --provenance` records, and `check` and `verify` make of it, when an
attacker chooses what the registry serves.

Anyone's keyless signature, one signed platform among several, two images for one platform,
provenance signed by a stranger, and referrers enough to fill the memory. The registry is the
FAKE one on loopback, serving the OCI referrers API; keys, certificates and a whole Sigstore are
made here (`testing.signing`), and every command runs through `pinguard.cli.main`.
"""
from __future__ import annotations

import base64
import datetime as dt
import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509

from pinguard.cli import main
from pinguard.errors import RegistryError
from pinguard.lock import lockfile
from pinguard.provenance import discovery
from pinguard.provenance.discovery import discover
from pinguard.provenance.evidence import OUTDATED, Evidence
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import ManifestBody, Platform, platforms_of, select_platforms
from testing.attestations import (
    DSSE_ENVELOPE,
    Payload,
    attested_index,
    cosign_referrer,
    cosign_signature,
    notation_signature,
    referrer,
    served,
    sigstore_bundle,
)
from testing.costs import peak_memory
from testing.fake_registry import FakeRegistry, Request, Response, Route, serve_manifests, serve_referrers
from testing.images import OCI_MANIFEST, Manifest, image, index, multi_platform
from testing.signing import (
    LocalSigstore,
    SigningKey,
    cosign_payload,
    cosign_sign,
    dsse,
    fulcio_issuer,
    issue,
    key_id,
    new_key,
    notation_header,
    notation_jws,
    notation_payload,
    root_ca,
    slsa_v1_github,
    spdx_document,
    statement,
    write_public_key,
)
from tests.conftest import UNPACED
from tests.registry.conftest import REGISTRY, settings_for

REPO = "acme/trainer"
NAME = f"ghcr.io/{REPO}"
INDEX = multi_platform("trainer")
AMD64, ARM64 = INDEX.children
SLSA_V1 = "https://slsa.dev/provenance/v1"
SPDX = "https://spdx.dev/Document"
ATTACKER = "https://github.com/attacker/evil/.github/workflows/sign.yml@refs/heads/main"
COSIGN_ATTESTATION_ARTIFACT = "application/vnd.dev.cosign.artifact.att.v1+json"


# --- what signers attach ---------------------------------------------------------------------------------


def signed(subject: Manifest, key: SigningKey, reference: str | None = NAME) -> Manifest:
    """A cosign signature (OCI 1.1 mode) of `subject` by `key`, saying it signs `reference`."""
    payload = cosign_payload(subject.digest, reference=reference)
    return cosign_referrer(subject, [cosign_signature(payload, base64.b64encode(cosign_sign(key, payload)).decode())])


def attested(subject: Manifest, *keys: SigningKey) -> Manifest:
    """A cosign attestation: SLSA provenance about `subject` in a DSSE envelope signed by `keys`."""
    envelope = dsse(statement([subject.digest], SLSA_V1, slsa_v1_github()), *keys)
    return referrer(subject, COSIGN_ATTESTATION_ARTIFACT, [Payload(DSSE_ENVELOPE, envelope)])


def sbom(subject: Manifest) -> Manifest:
    return referrer(subject, "text/spdx+json", [Payload("text/spdx+json", json.dumps(spdx_document(3)).encode())])


def buildkit_index() -> Manifest:
    """INDEX's images as `docker buildx build --provenance` pushes them: unsigned statements in the index."""
    def statements(platform: Manifest) -> list[Payload]:
        data = statement([platform.digest], SLSA_V1, slsa_v1_github())
        return [Payload("application/vnd.in-toto+json", data, {"in-toto.io/predicate-type": SLSA_V1})]

    return attested_index([(AMD64, statements(AMD64)), (ARM64, statements(ARM64))])


# --- the registry and the workspace ----------------------------------------------------------------------


class Registry:
    def __init__(self, fake: FakeRegistry) -> None:
        self.fake = fake

    def serve(self, tagged: Manifest, *referrers: Manifest) -> None:
        manifests, blobs = served({"1.0": tagged}, referrers)
        self.fake.routes.clear()
        self.fake.add(*serve_referrers(REPO, manifests), *serve_manifests(REPO, manifests, blobs=blobs))


@pytest.fixture
def registry() -> Iterator[Registry]:
    with FakeRegistry() as fake:
        yield Registry(fake)


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return new_key("ecdsa")


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: SigningKey) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_text(f"kind: Pod\nspec:\n  containers:\n  - name: t\n    image: {NAME}:1.0\n")
    write_public_key(key, Path("cosign.pub"))
    return tmp_path


def policy(rules: str, provenance: str = "keys: [cosign.pub]") -> None:
    Path(".pinguard.yaml").write_text(f"provenance: {{{provenance}}}\nrules:\n  unpinned: 'off'\n{rules}")


def run(registry: Registry, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    online = args[0] in ("lock", "resolve", "verify", "update")
    flags = ["--mirror", f"ghcr.io={registry.fake.url}", *UNPACED] if online else []
    status = main([*args, *flags], env={"HOME": str(Path.cwd() / "home"), "PINGUARD_CACHE_DIR": "cache"},
                  stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def relock(registry: Registry) -> Evidence:
    Path("pinguard.lock").unlink(missing_ok=True)
    status, _, err = run(registry, "lock", "--provenance")
    assert status == 0, err
    entry = lockfile.read(Path("pinguard.lock")).get(NAME, "1.0")
    assert entry is not None and entry.evidence is not None
    return entry.evidence


def findings(registry: Registry) -> tuple[int, list[str]]:
    status, out, _ = run(registry, "check", "pod.yaml")
    return status, [line for line in out.splitlines() if line.startswith("pod.yaml:")]


# --- 1. a rule names what it trusts ----------------------------------------------------------------------


def test_a_keys_only_policy_does_not_take_anyones_keyless_signature(work: Path, registry: Registry,
                                                                   key: SigningKey) -> None:
    sigstore = LocalSigstore.create(fulcio_issuer(), x509.UniformResourceIdentifier(ATTACKER))
    Path("root.json").write_text(json.dumps(sigstore.trusted_root()))
    bundle = json.dumps(sigstore.message_bundle(INDEX.digest)).encode()
    registry.serve(INDEX, sigstore_bundle(INDEX, bundle))
    trust = "keys: [cosign.pub], trusted-root: root.json"
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}']}}\n", trust)
    (recorded,) = relock(registry).signatures
    assert (recorded.kind, recorded.identity, recorded.verified, recorded.subject) == (
        "sigstore", ATTACKER, True, INDEX.digest)  # verified: the bundle is sound, its signer unknown to the policy
    status, [finding] = findings(registry)
    assert status == 1 and f"signed only by sigstore {ATTACKER}" in finding and "does not trust" in finding
    policy("  require-signature: {level: error, identities: ['https://github.com/acme/*']}\n", trust)
    assert findings(registry)[0] == 1
    policy("  require-signature: {level: error, identities: ['https://github.com/attacker/*'],"
           " issuers: ['https://accounts.example.com']}\n", trust)
    assert findings(registry)[0] == 1  # the identity named, but by another issuer
    policy("  require-signature: {level: error, identities: ['https://github.com/attacker/*']}\n", trust)
    assert findings(registry) == (0, [])  # the policy names it: then, and only then, it counts


def test_a_keys_only_policy_does_not_take_a_notation_signature(work: Path, registry: Registry,
                                                               key: SigningKey) -> None:
    root = root_ca("Evil Root CA")
    now = dt.datetime.now(dt.UTC)
    leaf = issue(root, "Evil Signer", valid=(now - dt.timedelta(days=365 * 2), now + dt.timedelta(days=30)))
    root.write(Path("ca.pem"))
    envelope = notation_jws(leaf, [leaf, root], notation_payload(INDEX.digest))
    registry.serve(INDEX, notation_signature(INDEX, envelope))
    trust = "keys: [cosign.pub], notation-certs: [ca.pem]"
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}']}}\n", trust)
    (recorded,) = relock(registry).signatures
    assert (recorded.kind, recorded.verified) == ("notation", True)
    status, [finding] = findings(registry)
    assert status == 1 and "signed only by notation CN=Evil Signer,O=Acme" in finding


def test_a_cosign_signature_made_for_another_repository_does_not_sign_this_one(
        work: Path, registry: Registry, key: SigningKey) -> None:
    registry.serve(INDEX, signed(INDEX, key, reference="docker.io/evil/other"))  # the same digest, signed elsewhere
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}']}}\n")
    (recorded,) = relock(registry).signatures
    assert (recorded.verified, recorded.reference) == (True, "docker.io/evil/other")
    assert 'reference = "docker.io/evil/other"' in Path("pinguard.lock").read_text()
    status, [finding] = findings(registry)
    assert status == 1 and f"signed only by signatures that name docker.io/evil/other, not {NAME}" in finding
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}'], signed-repository: any}}\n")
    assert findings(registry) == (0, [])  # said outright, and only then

    registry.serve(INDEX, signed(INDEX, key, reference=None))  # names no image: a runtime would refuse it
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}']}}\n")
    assert relock(registry).signatures[0].reference == ""
    status, [finding] = findings(registry)
    assert status == 1 and "signed only by signatures that name no image" in finding


def test_a_lock_recorded_before_the_signed_repository_is_looked_at_again(
        work: Path, registry: Registry, key: SigningKey) -> None:
    registry.serve(INDEX, signed(INDEX, key))
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}']}}\n")
    relock(registry)
    Path("pinguard.lock").write_text(Path("pinguard.lock").read_text().replace(f'reference = "{NAME}", ', ""))
    status, [finding] = findings(registry)
    assert status == 1 and OUTDATED in finding
    assert run(registry, "lock", "--provenance")[0] == 0  # what the finding says to do
    assert findings(registry) == (0, [])


@pytest.mark.parametrize(("store", "status"), [("notation-certs", 1), ("notation-signing-authorities", 0)])
def test_an_expired_notation_certificate_signs_again_only_through_a_signing_authority(
        work: Path, registry: Registry, store: str, status: int) -> None:
    root, now = root_ca("Signer Root CA"), dt.datetime.now(dt.UTC)
    leaf = issue(root, "Expired Signer", valid=(now - dt.timedelta(days=400), now - dt.timedelta(days=90)))
    root.write(Path("root.pem"))
    # Signed today, its authentic signing time backdated into the certificate's validity.
    header = notation_header(signing_time=now - dt.timedelta(days=120), authority=True)
    envelope = notation_jws(leaf, [leaf, root], notation_payload(INDEX.digest), header=header)
    registry.serve(INDEX, notation_signature(INDEX, envelope))
    policy("  require-signature: {level: error, identities: ['CN=Expired Signer,O=Acme']}\n",
           f"{store}: [root.pem]")
    (recorded,) = relock(registry).signatures
    assert recorded.verified is (status == 0)
    assert findings(registry)[0] == status


def test_a_signature_rule_naming_nobody_is_an_error_not_a_pass(work: Path, registry: Registry) -> None:
    policy("  require-signature: error\n")
    status, out, err = run(registry, "check", "pod.yaml")
    assert (status, out) == (2, "")
    assert "rules.require-signature: names no `keys` and no `identities`: it would trust no signature" in err
    assert "Traceback" not in err


# --- 2. evidence is about an image, and every image needs it ----------------------------------------------


def test_one_signed_and_attested_platform_does_not_vouch_for_the_others(work: Path, registry: Registry,
                                                                        key: SigningKey) -> None:
    registry.serve(INDEX, signed(ARM64, key), attested(ARM64, key), sbom(ARM64))
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}']}}\n"
           "  require-provenance: error\n  require-sbom: error\n")
    evidence = relock(registry)
    assert {s.subject for s in evidence.signatures} == {b.subject for b in evidence.builds} == {ARM64.digest}
    status, found = findings(registry)
    assert status == 1 and len(found) == 3
    assert all("the linux/amd64 image" in line and "arm64" not in line for line in found)

    registry.serve(INDEX, signed(ARM64, key), attested(ARM64, key), sbom(ARM64),
                   signed(AMD64, key), attested(AMD64, key), sbom(AMD64))
    relock(registry)
    assert findings(registry) == (0, [])
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}'], require-index: true}}\n")
    status, [finding] = findings(registry)
    assert status == 1 and "no signature on the index" in finding  # the digest pinned carries nothing

    registry.serve(INDEX, signed(INDEX, key))  # what `cosign sign trainer:1.0` signs: the index, naming both images
    relock(registry)
    assert findings(registry) == (0, [])


def test_a_lock_recorded_before_subjects_vouches_for_nothing_until_looked_at_again(
        work: Path, registry: Registry, key: SigningKey) -> None:
    registry.serve(INDEX, signed(INDEX, key), sbom(AMD64), sbom(ARM64))
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}']}}\n  require-sbom: error\n")
    relock(registry)
    text = Path("pinguard.lock").read_text()
    Path("pinguard.lock").write_text(text.replace(f'subject = "{INDEX.digest}", ', "")
                                     .replace(f'subject = "{AMD64.digest}", ', "")
                                     .replace(f'subject = "{ARM64.digest}", ', ""))
    status, found = findings(registry)
    assert status == 1 and len(found) == 2 and all(OUTDATED in line for line in found)
    assert run(registry, "lock", "--provenance")[0] == 0  # what the findings say to do
    assert findings(registry) == (0, [])


# --- 3. two images for one platform -----------------------------------------------------------------------


def test_an_index_with_two_images_for_one_platform_is_refused(work: Path, registry: Registry,
                                                             key: SigningKey) -> None:
    first, second = image(seed="runs"), image(seed="signed")  # both linux/amd64
    amd64 = {"architecture": "amd64", "os": "linux"}
    twice = index([(first, amd64, None), (second, amd64, None)])
    registry.serve(twice, signed(second, key))
    policy(f"  require-signature: {{level: error, keys: ['{key_id(key)}']}}\n")
    status, out, err = run(registry, "lock", "--provenance")
    assert (status, out) == (2, "")
    assert f"index {twice.digest} lists two images for 'linux/amd64': {first.digest} and {second.digest}" in err
    assert "Traceback" not in err and not Path("pinguard.lock").exists()
    status, out, err = run(registry, "resolve", f"{NAME}:1.0")
    assert status == 2 and "lists two images for 'linux/amd64'" in err


RUNS, HIDDEN = image(seed="runs"), image(seed="hidden")


@pytest.mark.parametrize(("entries", "refused"), [
    ([(RUNS, "linux/amd64", None), (HIDDEN, "linux/amd64", None)], "two images for 'linux/amd64'"),
    ([(HIDDEN, "linux/x86_64", None), (RUNS, "linux/amd64", None)], "two images for 'linux/amd64'"),
    ([(HIDDEN, "Linux/AMD64", None), (RUNS, "linux/amd64", None)], "two images for 'linux/amd64'"),
    ([(HIDDEN, "linux/arm64", None), (RUNS, "linux/arm64/v8", None)], "two images for 'linux/arm64/v8'"),
    ([(HIDDEN, "linux/amd64", {"vnd.docker.reference.type": "attestation-manifest"}), (RUNS, "linux/amd64", None)],
     "two images for 'linux/amd64'"),
    ([(RUNS, "linux/amd64", None), (HIDDEN, "linux/arm64", {"com.amazon.soci.image-manifest-digest": RUNS.digest})],
     "as no image, yet first for that platform: a runtime would pull it"),
    ([(RUNS, "linux/amd64", None), (HIDDEN, "linux/amd64", {"com.amazon.soci.image-manifest-digest": RUNS.digest})],
     None),  # a SOCI index after its image: never pulled
    ([(RUNS, "linux/amd64", None), (RUNS, "linux/amd64", None)], None),  # one image listed twice is one image
], ids=["same", "x86_64", "case", "arm64-v8", "marked-attestation", "marked-alone", "soci-after", "same-digest"])
def test_what_a_runtime_pulls_is_what_pinguard_records_or_the_index_is_refused(
        entries: list[tuple[Manifest, str, dict[str, str] | None]], refused: str | None) -> None:
    def platform(spec: str) -> dict[str, str]:
        os_name, architecture, *variant = spec.split("/")
        return {"os": os_name, "architecture": architecture, **({"variant": variant[0]} if variant else {})}

    listed = index([(child, platform(spec), notes) for child, spec, notes in entries])
    body = ManifestBody(listed.data, listed.digest, listed.media_type)
    if refused is None:
        assert platforms_of(body) == {"linux/amd64": RUNS.digest}
        assert select_platforms(body, [Platform("linux", "amd64")]) == {"linux/amd64": RUNS.digest}
        return
    for read in (platforms_of, lambda b: select_platforms(b, [Platform("linux", "amd64")])):
        with pytest.raises(RegistryError, match=refused.replace("(", r"\(")) as raised:
            read(body)
        assert listed.digest in str(raised.value) and HIDDEN.digest in str(raised.value)


# --- 4. provenance counts when it is signed ---------------------------------------------------------------


def test_provenance_signed_by_a_stranger_never_counts_and_unsigned_only_when_allowed(
        work: Path, registry: Registry) -> None:
    stranger = new_key("ed25519")
    registry.serve(INDEX, attested(INDEX, stranger))
    policy("  require-provenance: {level: error, allow-unsigned: true}\n")
    (build,) = relock(registry).builds
    assert (build.signed, build.problem) == (False, "none of the 1 trusted cosign keys verifies its signature")
    assert 'problem = "none of the 1 trusted cosign keys verifies its signature"' in Path("pinguard.lock").read_text()
    status, [finding] = findings(registry)
    assert status == 1 and "a statement whose signature did not verify" in finding

    registry.serve(buildkit_index())  # BuildKit's own statements: raw, unsigned
    evidence = relock(registry)
    assert {(b.subject, b.signed, b.problem) for b in evidence.builds} == {
        (AMD64.digest, False, None), (ARM64.digest, False, None)}
    assert findings(registry) == (0, [])  # allowed
    policy("  require-provenance: error\n")
    status, [finding] = findings(registry)
    assert status == 1 and "an unsigned statement, which the policy does not allow (`allow-unsigned`)" in finding


def test_verify_calls_a_signature_lost_on_provenance_a_change(work: Path, registry: Registry,
                                                              key: SigningKey) -> None:
    registry.serve(INDEX, attested(INDEX, key))
    policy("  require-provenance: error\n")
    (build,) = relock(registry).builds
    assert build.signed
    assert run(registry, "verify")[0] == 0
    registry.serve(INDEX, attested(INDEX, new_key("ed25519")))  # the same statement, re-signed by a stranger
    status, out, _ = run(registry, "verify")
    assert status == 1
    assert "its provenance changed: " in out and "(signed, " in out and "(signature failed, " in out


def test_verify_says_a_hand_added_signature_is_recorded_but_not_at_the_registry(
        work: Path, registry: Registry, key: SigningKey) -> None:
    registry.serve(INDEX)
    relock(registry)
    text = Path("pinguard.lock").read_text()
    row = f'{{ kind = "cosign", subject = "{INDEX.digest}", identity = "{key_id(key)}", verified = true }}'
    Path("pinguard.lock").write_text(text.replace("signatures = []", f"signatures = [\n  {row},\n]"))
    status, out, _ = run(registry, "verify")
    assert status == 1
    assert (f"the cosign signature by {key_id(key)} on {INDEX.digest} is recorded in the lock but not found at "
            "the registry") in out
    assert "no longer" not in out


# --- 12. one byte budget per image ------------------------------------------------------------------------

MIB = 1 << 20


class Big:
    """Many referrers of the SBOM kind, each with layers of a MiB made on request, so the test holds none."""

    def __init__(self, subjects: list[Manifest], per_subject: int, layers: int, *, declared: int = MIB) -> None:
        self.sizes: dict[str, int] = {}
        self.seeds: dict[str, int] = {}
        self.manifests: dict[str, tuple[str, bytes]] = {}
        for number, subject in enumerate(subjects):
            for referrer_number in range(per_subject):
                seeds = [(number * per_subject + referrer_number) * layers + n for n in range(layers)]
                document = {
                    "schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": "application/spdx+json",
                    "config": {"mediaType": "application/vnd.oci.empty.v1+json", "size": 2,
                               "digest": "sha256:" + hashlib.sha256(b"{}").hexdigest()},
                    "layers": [{"mediaType": "application/spdx+json", "size": declared,
                                "digest": self._digest(seed)} for seed in seeds],
                    "subject": subject.descriptor(),
                }
                data = json.dumps(document).encode()
                self.manifests["sha256:" + hashlib.sha256(data).hexdigest()] = (OCI_MANIFEST, data)

    def _digest(self, seed: int) -> str:
        digest = "sha256:" + hashlib.sha256(self.content(seed)).hexdigest()
        self.seeds[digest] = seed
        return digest

    @staticmethod
    def content(seed: int) -> bytes:
        return hashlib.sha256(str(seed).encode()).digest() * (MIB // 32)

    def routes(self, tagged: Manifest) -> list[Route]:
        manifests, blobs = served({"1.0": tagged})
        manifests.update(self.manifests)

        def blob(request: Request) -> Response | None:
            seed = self.seeds.get(request.bare_path.rsplit("/", 1)[1])
            return None if seed is None else Response(200, {"Content-Type": "application/octet-stream"},
                                                      self.content(seed))

        return [*serve_referrers(REPO, manifests), Route("GET", rf"/v2/{REPO}/blobs/[^/]+", blob),
                *serve_manifests(REPO, manifests, blobs=blobs)]


@pytest.mark.parametrize("declared", [MIB, 1], ids=["sizes-told", "sizes-lied"])
def test_discovery_holds_one_budget_per_image_however_many_referrers(tmp_path: Path, declared: int) -> None:
    big = Big([INDEX, AMD64], per_subject=discovery.MAX_REFERRERS, layers=2, declared=declared)  # 128 MiB
    with FakeRegistry(big.routes(INDEX)) as fake, RegistryClient(settings_for(fake.url, tmp_path),
                                                                 RegistryCache(None)) as client:
        found, peak = peak_memory(lambda: discover(client, REGISTRY, REPO, INDEX.digest, [AMD64.digest, ARM64.digest]))
        fetched = len(fake.requests_to(rf"/v2/{REPO}/blobs/.*"))
    assert peak < discovery.MAX_BYTES + 24 * MIB, f"{peak / MIB:.0f} MiB held"
    assert sum(len(layer.data) for artifact in found.artifacts for layer in artifact.layers) <= discovery.MAX_BYTES
    assert fetched <= discovery.MAX_BYTES // MIB + 1
    assert found.unread is not None and f"over the {discovery.MAX_BYTES}-byte budget" in found.unread


def test_a_search_cut_short_is_recorded_and_said_in_the_finding(work: Path, registry: Registry,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discovery, "MAX_BYTES", 1024)
    big = Big([AMD64], per_subject=2, layers=1)
    registry.fake.routes.clear()
    registry.fake.add(*big.routes(INDEX))
    policy("  require-sbom: error\n")
    evidence = relock(registry)
    assert evidence.sboms == () and evidence.unread is not None
    assert "provenance_unread = " in Path("pinguard.lock").read_text()
    status, [finding] = findings(registry)
    assert status == 1 and "the search stopped early: " in finding and "over the 1024-byte budget" in finding
