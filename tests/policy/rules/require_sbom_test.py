"""require-sbom: every platform image the lock records (and the index, when asked) has an SBOM about it."""
from __future__ import annotations

from pinguard.policy.rules import require_sbom
from pinguard.provenance.evidence import Evidence, Sbom
from tests.policy.rules.evidence_helpers import AMD64, ARM64, CHECKED, ELSEWHERE, INDEX, entry, judged

BOTH = {"linux/amd64": AMD64, "linux/arm64": ARM64}


def _sbom(subject: str | None) -> Sbom:
    return Sbom("https://spdx.dev/Document", ELSEWHERE, 3, subject)


def test_an_sbom_about_each_platform_or_the_index_passes() -> None:
    assert judged(require_sbom, {}, entry(Evidence(CHECKED, sboms=(_sbom(AMD64), _sbom(ARM64))), BOTH)) == []
    assert judged(require_sbom, {}, entry(Evidence(CHECKED, sboms=(_sbom(INDEX),)), BOTH)) == []


def test_no_sbom_at_all_says_when_it_was_looked_for() -> None:
    [message] = judged(require_sbom, {}, entry(Evidence(CHECKED)))
    assert "had no SBOM" in message and CHECKED in message


def test_a_platform_without_its_own_sbom_is_named() -> None:
    [message] = judged(require_sbom, {}, entry(Evidence(CHECKED, sboms=(_sbom(AMD64),)), BOTH))
    assert "no SBOM describes" in message and "linux/arm64" in message


def test_the_index_needs_its_own_only_when_asked() -> None:
    platforms_only = entry(Evidence(CHECKED, sboms=(_sbom(AMD64),)))
    assert judged(require_sbom, {}, platforms_only) == []
    assert judged(require_sbom, {"require-index": True}, platforms_only) != []


def test_repositories_limit_the_images_judged() -> None:
    assert judged(require_sbom, {"repositories": ["docker.io/*"]}, entry(Evidence(CHECKED))) == []
    assert judged(require_sbom, {"repositories": ["ghcr.io/acme/*"]}, entry(Evidence(CHECKED))) != []


def test_an_image_whose_provenance_was_never_checked_is_told_how_to_check_it() -> None:
    [message] = judged(require_sbom, {}, entry(None))
    assert "provenance was never checked" in message and "pinguard lock --provenance" in message
