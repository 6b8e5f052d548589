"""Provenance end to end: `lock --provenance` records it, `check` enforces it offline, `verify` re-checks it.

The registry is the FAKE registry serving the OCI referrers API (docker-registry 2.8
has none; the tag fallback is tested against the real one in tests/provenance).
The image is a BuildKit-style index whose attestation manifest carries SLSA v1
provenance and an SPDX SBOM for the amd64 image; a cosign signature made with a key
generated here refers to the index.
"""
from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from testing.attestations import Payload, attested_index, cosign_referrer, cosign_signature, served
from testing.fake_registry import FakeRegistry, serve_manifests, serve_referrers
from testing.images import Manifest, image
from testing.signing import (
    SigningKey,
    cosign_payload,
    cosign_sign,
    key_id,
    new_key,
    slsa_v1_github,
    spdx_document,
    statement,
    write_public_key,
)
from tests.conftest import UNPACED

REPO = "acme/trainer"
NAME = f"ghcr.io/{REPO}"
SLSA_V1 = "https://slsa.dev/provenance/v1"
SPDX = "https://spdx.dev/Document"


def _attested(subject: str, predicate_type: str, predicate: object) -> Payload:
    data = statement([subject], predicate_type, predicate)
    return Payload("application/vnd.in-toto+json", data, {"in-toto.io/predicate-type": predicate_type})


def _signed(index: Manifest, key: SigningKey, *, names: str | None = None) -> Manifest:
    payload = cosign_payload(names or index.digest, reference=NAME)
    return cosign_referrer(index, [cosign_signature(payload, base64.b64encode(cosign_sign(key, payload)).decode())])


class Registry:
    def __init__(self, fake: FakeRegistry) -> None:
        self.fake = fake
        self.key = new_key("ecdsa")
        amd64 = image(seed="trainer")
        statements = [_attested(amd64.digest, SLSA_V1, slsa_v1_github()),
                      _attested(amd64.digest, SPDX, spdx_document(7))]
        self.index = attested_index([(amd64, statements)])
        self.signature = _signed(self.index, self.key)
        self.serve(self.signature)

    def serve(self, *referrers: Manifest) -> None:
        manifests, blobs = served({"1.0": self.index}, referrers)
        self.fake.routes.clear()
        self.fake.add(*serve_referrers(REPO, manifests), *serve_manifests(REPO, manifests, blobs=blobs))


@pytest.fixture
def registry() -> Iterator[Registry]:
    with FakeRegistry() as fake:
        yield Registry(fake)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: Registry) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_text(f"kind: Pod\nspec:\n  containers:\n  - name: t\n    image: {NAME}:1.0\n")
    write_public_key(registry.key, Path("cosign.pub"))
    Path(".pinguard.yaml").write_text("provenance:\n  keys: [cosign.pub]\n")
    return tmp_path


def _requiring_signature(registry: Registry) -> str:
    return f"rules:\n  unpinned: 'off'\n  require-signature: {{level: error, keys: ['{key_id(registry.key)}']}}\n"


def _run(registry: Registry, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    online = args[0] in ("lock", "resolve", "verify", "update")
    flags = ["--mirror", f"ghcr.io={registry.fake.url}", *UNPACED] if online else []
    status = main([*args, *flags], env={"HOME": str(Path.cwd() / "home")}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_lock_records_provenance_signature_and_sbom(work: Path, registry: Registry) -> None:
    assert _run(registry, "lock", "--provenance")[0] == 0
    entry = lockfile.read(Path("pinguard.lock")).get(NAME, "1.0")
    assert entry is not None and entry.evidence is not None
    (build,) = entry.evidence.builds
    assert (build.builder, build.source, build.revision) == (
        "https://github.com/actions/runner/github-hosted", "https://github.com/acme/trainer",
        "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d")
    assert build.subject_matches and build.subject == entry.platforms["linux/amd64"]
    (signature,) = entry.evidence.signatures
    assert (signature.kind, signature.identity, signature.verified) == ("cosign", key_id(registry.key), True)
    (sbom,) = entry.evidence.sboms
    assert (sbom.predicate_type, sbom.packages) == (SPDX, 7)
    text = Path("pinguard.lock").read_text()
    assert "provenance_checked_at = " in text and 'kind = "cosign"' in text


def test_without_the_flag_nothing_is_looked_for_and_check_says_so(work: Path, registry: Registry) -> None:
    assert _run(registry, "lock")[0] == 0
    assert lockfile.read(Path("pinguard.lock")).get(NAME, "1.0").evidence is None  # type: ignore[union-attr]
    assert not registry.fake.requests_to(r".*/referrers/.*")  # provenance off costs nothing
    Path("policy.yaml").write_text(_requiring_signature(registry))
    status, out, _ = _run(registry, "check", "--policy", "policy.yaml", "pod.yaml")
    assert status == 1
    assert "provenance was never checked; run `pinguard lock --provenance`" in out


def test_the_policy_makes_it_the_default_and_check_enforces_it(work: Path, registry: Registry) -> None:
    Path(".pinguard.yaml").write_text(
        "provenance:\n  lock: true\n  keys: [cosign.pub]\n"
        "rules:\n  unpinned: 'off'\n"
        f"  require-signature: {{level: error, keys: ['{key_id(registry.key)}']}}\n"
        "  require-provenance: {level: error, builders: ['https://github.com/actions/runner/*'],"
        " sources: ['https://github.com/acme/*'], allow-unsigned: true}\n"
        "  require-sbom: error\n")
    assert _run(registry, "lock")[0] == 0
    assert _run(registry, "check", "pod.yaml")[:2] == (0, "")
    Path(".pinguard.yaml").write_text(Path(".pinguard.yaml").read_text().replace("acme/*", "other/*"))
    status, out, _ = _run(registry, "check", "pod.yaml")
    assert status == 1
    assert "was built from https://github.com/acme/trainer, not one of https://github.com/other/*" in out


def test_an_image_with_nothing_is_recorded_as_none_found(work: Path, registry: Registry) -> None:
    registry.serve()  # no signature referrer
    registry.index = attested_index([(image(seed="bare"), [])])
    registry.serve()
    assert _run(registry, "lock", "--provenance")[0] == 0
    evidence = lockfile.read(Path("pinguard.lock")).get(NAME, "1.0").evidence  # type: ignore[union-attr]
    assert evidence is not None and (evidence.builds, evidence.signatures, evidence.sboms) == ((), (), ())
    Path("policy.yaml").write_text(_requiring_signature(registry) + "  require-sbom: error\n")
    status, out, _ = _run(registry, "check", "--policy", "policy.yaml", "pod.yaml")
    assert status == 1
    assert f"had no signature when its provenance was checked ({evidence.checked_at})" in out
    assert "had no SBOM" in out


def test_a_signature_by_an_untrusted_key_or_for_another_image_does_not_count(work: Path, registry: Registry) -> None:
    stranger = new_key("ed25519")
    registry.serve(_signed(registry.index, stranger), _signed(registry.index, registry.key, names="sha256:" + "9" * 64))
    assert _run(registry, "lock", "--provenance")[0] == 0
    evidence = lockfile.read(Path("pinguard.lock")).get(NAME, "1.0").evidence  # type: ignore[union-attr]
    assert evidence is not None
    assert {s.verified for s in evidence.signatures} == {False}
    assert any("not this image" in (s.problem or "") for s in evidence.signatures)
    Path("policy.yaml").write_text(_requiring_signature(registry))
    status, out, _ = _run(registry, "check", "--policy", "policy.yaml", "pod.yaml")
    assert status == 1 and "no signature on the linux/amd64 image verified (cosign: " in out


def test_resolve_json_shows_it(work: Path, registry: Registry) -> None:
    status, out, _ = _run(registry, "resolve", "--provenance", "--format", "json", f"{NAME}:1.0")
    assert status == 0
    (resolved,) = json.loads(out)["images"]
    assert resolved["provenance"]["signatures"][0]["verified"] is True
    assert resolved["provenance"]["builds"][0]["source"] == "https://github.com/acme/trainer"
    status, out, _ = _run(registry, "resolve", "--provenance", f"{NAME}:1.0")
    assert ("built by    https://github.com/actions/runner/github-hosted from "
            "https://github.com/acme/trainer@7fd1a60") in out
    assert "signature   cosign sha256:" in out


def test_verify_reports_a_signature_that_no_longer_verifies(work: Path, registry: Registry) -> None:
    assert _run(registry, "lock", "--provenance")[0] == 0
    assert _run(registry, "verify")[0] == 0
    registry.serve()  # the signature is gone from the registry
    status, out, _ = _run(registry, "verify")
    assert status == 1
    assert (f"the cosign signature by {key_id(registry.key)} on {registry.index.digest} is recorded in the lock "
            "but not found at the registry") in out
    status, out, _ = _run(registry, "verify", "--format", "json")
    assert json.loads(out)["entries"][0]["provenance"]


def test_update_carries_provenance_forward_and_shows_what_changed(work: Path, registry: Registry) -> None:
    Path(".pinguard.yaml").write_text(
        "provenance:\n  keys: [cosign.pub]\n"
        "tags:\n  - {repository: 'ghcr.io/acme/*', moving: '^1\\.0$', frozen: '^1\\.0\\.\\d+$'}\n")
    assert _run(registry, "lock", "--provenance")[0] == 0
    assert _run(registry, "pin")[0] == 0
    rebuilt, old = image(seed="trainer-rebuilt"), registry.index
    revision = "0123456789abcdef0123456789abcdef01234567"
    registry.index = attested_index([(rebuilt, [_attested(rebuilt.digest, SLSA_V1, slsa_v1_github(commit=revision))])])
    registry.serve(old)  # the tag moved to a rebuild, not signed this time; the old image is still served
    status, out, err = _run(registry, "update")
    assert status == 0, err
    assert f"  revision    7fd1a60b01f91b314f59955a4e4d4e80d8edf11d -> {revision}" in out
    assert f"  signed by   cosign {key_id(registry.key)} -> none" in out
    assert "  SBOMs       1 -> 0" in out
    entry = lockfile.read(Path("pinguard.lock")).get(NAME, "1.0")
    assert entry is not None and entry.digest == registry.index.digest
    assert entry.evidence is not None and entry.evidence.builds[0].revision == revision  # looked for again
