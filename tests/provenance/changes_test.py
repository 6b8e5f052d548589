"""What `verify` and `update` say when an image's provenance changes."""
from __future__ import annotations

from pinguard.provenance.changes import differences, lost
from pinguard.provenance.model import Build, Evidence, Sbom, Signature

SUBJECT, STATEMENT, SBOM = ("sha256:" + c * 64 for c in "abc")
BUILD = Build("https://slsa.dev/provenance/v1", "https://github.com/actions/runner", "https://github.com/acme/app",
              "1111", None, None, STATEMENT, SUBJECT, True)
SIGNED = Signature("cosign", "sha256:key", None, True)
BEFORE = Evidence("2026-11-01T00:00:00Z", (BUILD,), (SIGNED,), (Sbom("https://spdx.dev/Document", SBOM, 3),))


def test_nothing_lost_when_all_still_holds() -> None:
    assert lost(BEFORE, Evidence("2026-12-01T00:00:00Z", BEFORE.builds, BEFORE.signatures, BEFORE.sboms)) == []


def test_a_signature_gone_or_failing_and_changed_provenance_are_lost() -> None:
    failing = Signature("cosign", "sha256:key", None, False, "signs sha256:9, not this image")
    rebuilt = Build(BUILD.predicate_type, BUILD.builder, BUILD.source, "2222", None, None, STATEMENT, SUBJECT, True)
    now = Evidence("2026-12-01T00:00:00Z", (rebuilt,), (failing,), ())
    assert lost(BEFORE, now) == [
        "the cosign signature by sha256:key no longer verifies: signs sha256:9, not this image",
        "its provenance changed: https://github.com/actions/runner from https://github.com/acme/app@1111 -> "
        "https://github.com/actions/runner from https://github.com/acme/app@2222",
        "an SBOM recorded in the lock is no longer found",
    ]
    assert lost(BEFORE, Evidence("now", BEFORE.builds, (), BEFORE.sboms)) == [
        "the cosign signature by sha256:key no longer verifies: it is no longer found"]


def test_a_rebuild_shows_only_what_differs() -> None:
    rebuilt = Build(BUILD.predicate_type, "https://buildkite.com/acme", BUILD.source, "2222", None, None,
                    STATEMENT, SUBJECT, True)
    assert differences(BEFORE, Evidence("now", (rebuilt,), (SIGNED,), BEFORE.sboms)) == [
        ("builder", "https://github.com/actions/runner", "https://buildkite.com/acme"),
        ("revision", "1111", "2222"),
    ]
    assert differences(BEFORE, None)[0] == ("builder", "https://github.com/actions/runner", "not checked")
    assert differences(None, None) == []
