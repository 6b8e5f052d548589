"""One locked image's provenance: what discovery found, each signature verified and each statement read, once."""
from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import pytest

from pinguard.errors import NotFound, PinguardError
from pinguard.provenance import discovery
from pinguard.provenance.discovery import Discovered
from pinguard.provenance.evidence import COSIGN_SIGNATURE, IN_TOTO, SLSA_V02, SPDX, Artifact, Signature
from pinguard.provenance.gather import gather, gather_all
from pinguard.provenance.trust import Trust
from testing import signing

if TYPE_CHECKING:
    from pinguard.registry.client import RegistryClient

INDEX = "sha256:" + "1" * 64
AMD64 = "sha256:" + "2" * 64


def _client(workers: int = 1) -> RegistryClient:
    """What `gather` asks of a client itself: its workers (discovery, which uses the rest, is a stand-in)."""
    return cast("RegistryClient", SimpleNamespace(settings=SimpleNamespace(workers=workers)))


def _discovering(monkeypatch: pytest.MonkeyPatch, *found: Discovered | PinguardError) -> list[tuple[Any, ...]]:
    """Discovery answering with `found`, one image after another; the questions it was asked."""
    asked: list[tuple[Any, ...]] = []
    answers = iter(found)

    def discover(client: object, registry: str, repository: str, index_digest: str,
                 platform_digests: Iterable[str], wanted: Collection[str] = ()) -> Discovered:
        asked.append((registry, repository, index_digest, list(platform_digests)))
        answer = next(answers)
        if isinstance(answer, PinguardError):
            raise answer
        return answer

    monkeypatch.setattr(discovery, "discover", discover)
    return asked


def _artifacts(key: signing.SigningKey) -> tuple[Artifact, ...]:
    """A cosign signature of the index, found by two schemes; a BuildKit attestation of its amd64 image, twice."""
    by_referrers, by_tag = (signing.artifact(INDEX, COSIGN_SIGNATURE, signing.cosign_layer(
        key, signing.cosign_payload(INDEX)), found_by=how) for how in ("referrers", "tag"))
    attestation = signing.artifact(
        AMD64, IN_TOTO, signing.in_toto_layer(signing.statement([AMD64], SLSA_V02, signing.slsa_v02_buildkit()),
                                              SLSA_V02),
        signing.in_toto_layer(signing.statement([AMD64], SPDX, signing.spdx_document(3)), SPDX), found_by="index")
    return by_referrers, by_tag, attestation, attestation


def test_what_refers_to_an_image_is_verified_read_and_recorded_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    key = signing.new_key("ecdsa")
    trust = Trust(keys=(signing.write_public_key(key, tmp_path / "cosign.pub"),))
    asked = _discovering(monkeypatch, Discovered(_artifacts(key), ("a SOCI index: not looked at",), "2 layers"))
    with caplog.at_level(logging.DEBUG, logger="pinguard"):
        evidence = gather(_client(), "ghcr.io/acme/trainer:1.0", INDEX, {"linux/amd64": AMD64}, trust)
    assert asked == [("ghcr.io", "acme/trainer", INDEX, [AMD64])]
    assert evidence.signatures == (Signature("cosign", signing.key_id(key), None, True, subject=INDEX,
                                             reference="registry.example/team/app"),)
    (build,) = evidence.builds
    assert (build.subject, build.subject_matches, build.source) == (AMD64, True, "https://github.com/acme/trainer.git")
    (sbom,) = evidence.sboms
    assert (sbom.predicate_type, sbom.packages, sbom.subject) == (SPDX, 3, AMD64)
    assert evidence.unread == "2 layers" and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", evidence.checked_at)
    assert f"ghcr.io/acme/trainer:1.0@{INDEX}: a SOCI index: not looked at" in caplog.messages


def test_a_signature_by_no_trusted_key_is_recorded_unverified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _discovering(monkeypatch, Discovered(_artifacts(signing.new_key("ecdsa"))[:1], ()))
    trust = Trust(keys=(signing.write_public_key(signing.new_key("ecdsa"), tmp_path / "other.pub"),))
    (signature,) = gather(_client(), "ghcr.io/acme/trainer", INDEX, {}, trust).signatures
    assert not signature.verified and signature.problem


def test_each_image_gets_its_evidence_or_its_error_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    _discovering(monkeypatch, Discovered((), ()), NotFound("ghcr.io/acme/gone: not found"), Discovered((), ()))
    images: list[tuple[str, str, Mapping[str, str]]] = [
        ("ghcr.io/acme/a", INDEX, {}), ("ghcr.io/acme/gone", INDEX, {}), ("ghcr.io/acme/c", AMD64, {})]
    first, failed, last = gather_all(_client(workers=1), images, Trust())  # one at a time: answers in order
    assert isinstance(failed, NotFound) and str(failed) == "ghcr.io/acme/gone: not found"
    assert not isinstance(first, PinguardError) and first.signatures == () and first.builds == ()
    assert not isinstance(last, PinguardError) and last.sboms == ()
