"""What `verify` and `update` say when an image's provenance changes."""
from __future__ import annotations

from dataclasses import replace

from pinguard.provenance.changes import differences, lost
from pinguard.provenance.evidence import OUTDATED, Build, Evidence, Sbom, Signature

SUBJECT, STATEMENT, SBOM, PLATFORM = ("sha256:" + c * 64 for c in "abcd")
BUILD = Build("https://slsa.dev/provenance/v1", "https://github.com/actions/runner", "https://github.com/acme/app",
              "1111", None, None, STATEMENT, SUBJECT, True, signed=True)
SIGNED = Signature("cosign", "sha256:key", None, True, subject=SUBJECT, reference="ghcr.io/acme/app")
BEFORE = Evidence("2026-11-01T00:00:00Z", (BUILD,), (SIGNED,), (Sbom("https://spdx.dev/Document", SBOM, 3, SUBJECT),))


def test_nothing_lost_when_all_still_holds() -> None:
    assert lost(BEFORE, Evidence("2026-12-01T00:00:00Z", BEFORE.builds, BEFORE.signatures, BEFORE.sboms)) == []


def test_a_signature_gone_or_failing_and_changed_provenance_are_lost() -> None:
    failing = Signature("cosign", "sha256:key", None, False, "signs sha256:9, not this image", SUBJECT)
    rebuilt = replace(BUILD, revision="2222")
    now = Evidence("2026-12-01T00:00:00Z", (rebuilt,), (failing,), ())
    assert lost(BEFORE, now) == [
        f"the cosign signature by sha256:key on {SUBJECT} no longer verifies: signs sha256:9, not this image",
        f"its provenance changed: https://github.com/actions/runner from https://github.com/acme/app@1111 "
        f"(signed, about {SUBJECT}) -> https://github.com/actions/runner from https://github.com/acme/app@2222 "
        f"(signed, about {SUBJECT})",
        "an SBOM the lock records is not found at the registry",
    ]


def test_a_signature_the_registry_does_not_serve_is_said_to_be_recorded_but_not_found() -> None:
    # A hand-added record never was at the registry: "no longer found" would claim it once was.
    assert lost(BEFORE, Evidence("now", BEFORE.builds, (), BEFORE.sboms)) == [
        f"the cosign signature by sha256:key on {SUBJECT} is recorded in the lock but not found at the registry"]
    cut = Evidence("now", BEFORE.builds, (), BEFORE.sboms, unread="3 referrer manifests or layers left unread")
    assert lost(BEFORE, cut)[0].endswith("not found at the registry (3 referrer manifests or layers left unread)")


def test_a_signature_verified_on_another_subject_does_not_stand_for_the_one_recorded() -> None:
    elsewhere = replace(SIGNED, subject=PLATFORM)
    assert lost(BEFORE, Evidence("now", BEFORE.builds, (elsewhere,), BEFORE.sboms)) == [
        f"the cosign signature by sha256:key on {SUBJECT} is recorded in the lock but not found at the registry"]


def test_a_signature_that_names_another_repository_now_is_lost() -> None:
    resigned = replace(SIGNED, reference="docker.io/evil/other")
    assert lost(BEFORE, Evidence("now", BEFORE.builds, (resigned,), BEFORE.sboms)) == [
        f"the cosign signature by sha256:key on {SUBJECT} names docker.io/evil/other now, not ghcr.io/acme/app as "
        "the lock records"]
    unrecorded = replace(SIGNED, reference=None)  # recorded before references were: outdated, nothing to compare
    now = Evidence("now", BEFORE.builds, (resigned,), BEFORE.sboms)
    assert lost(replace(BEFORE, signatures=(unrecorded,)), now) == [f"its provenance was {OUTDATED}"]


def test_a_statement_that_lost_its_signature_is_a_change() -> None:
    for unsigned in (replace(BUILD, signed=False), replace(BUILD, signed=False, problem="none of the 1 keys")):
        [change] = lost(BEFORE, Evidence("now", (unsigned,), BEFORE.signatures, BEFORE.sboms))
        assert change.startswith("its provenance changed: ") and "(signed, " in change
        assert "(unsigned, " in change or "(signature failed, " in change


def test_evidence_recorded_without_subjects_is_called_outdated_not_lost() -> None:
    old = Evidence("then", (BUILD,), (replace(SIGNED, subject=None),), (replace(BEFORE.sboms[0], subject=None),))
    assert lost(old, BEFORE) == [f"its provenance was {OUTDATED}"]


def test_a_rebuild_shows_only_what_differs() -> None:
    rebuilt = replace(BUILD, builder="https://buildkite.com/acme", revision="2222")
    assert differences(BEFORE, Evidence("now", (rebuilt,), (SIGNED,), BEFORE.sboms)) == [
        ("builder", "https://github.com/actions/runner", "https://buildkite.com/acme"),
        ("revision", "1111", "2222"),
    ]
    assert differences(BEFORE, None)[0] == ("builder", "https://github.com/actions/runner", "not checked")
    assert differences(None, None) == []
