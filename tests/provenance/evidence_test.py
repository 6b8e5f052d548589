"""The provenance recorded per lock entry: what counts, what is outdated, and when it was looked for."""
from __future__ import annotations

from pinguard.provenance.evidence import SLSA_V1, SPDX, Build, Evidence, Sbom, Signature

IMAGE = "sha256:" + "a" * 64


def _build(problem: str | None = None, *, signed: bool = False) -> Build:
    return Build(SLSA_V1, "https://github.com/actions/runner", "https://github.com/acme/trainer", "4b220de", None,
                 None, "sha256:" + "c" * 64, IMAGE, True, signed, problem)


def test_a_build_whose_signature_did_not_verify_has_failed() -> None:
    assert not _build().failed  # unsigned: it counts where unsigned provenance does
    assert not _build(signed=True).failed
    assert _build("signed by no trusted key").failed


def test_evidence_that_names_no_subject_is_outdated_and_none_found_is_an_answer() -> None:
    assert not Evidence("2025-06-01T12:00:00Z").outdated  # looked, found nothing
    signed = Signature("cosign", "k", None, True, subject=IMAGE, reference="ghcr.io/acme/trainer")
    sbom = Sbom(SPDX, "sha256:" + "d" * 64, 12, IMAGE)
    current = Evidence("2025-06-01T12:00:00Z", signatures=(signed,), sboms=(sbom,))
    assert not current.outdated
    assert Evidence("2025-06-01T12:00:00Z", signatures=(Signature("cosign", "k", None, True),)).outdated
    assert Evidence("2025-06-01T12:00:00Z", sboms=(Sbom(SPDX, "sha256:" + "d" * 64, 12),)).outdated


def test_a_verified_cosign_signature_without_the_image_it_names_is_outdated() -> None:
    def evidence(signature: Signature) -> Evidence:
        return Evidence("2025-06-01T12:00:00Z", signatures=(signature,))

    assert evidence(Signature("cosign", "k", None, True, subject=IMAGE)).outdated  # recorded before `reference`
    assert not evidence(Signature("cosign", "k", None, True, subject=IMAGE, reference="")).outdated  # names none
    assert not evidence(Signature("cosign", None, None, False, "no key", IMAGE)).outdated  # never read that far
    assert not evidence(Signature("notation", "CN=x", "CN=y", True, subject=IMAGE)).outdated  # binds a digest alone
