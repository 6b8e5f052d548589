"""require-provenance: each platform image has a build statement the policy takes at its word, naming what it allows."""
from __future__ import annotations

from typing import Any

from pinguard.policy.rules import require_provenance
from pinguard.provenance.evidence import Build, Evidence
from tests.policy.rules.evidence_helpers import AMD64, CHECKED, ELSEWHERE, entry, judged

RUNNER = "https://github.com/actions/runner"
SOURCE = "https://github.com/acme/trainer"


def _built(**fields: Any) -> list[str]:
    """The findings about an image with one statement: signed, about amd64, by RUNNER from SOURCE unless told."""
    conf = fields.pop("conf", {})
    values: dict[str, Any] = {
        "predicate_type": "https://slsa.dev/provenance/v1", "builder": RUNNER, "source": SOURCE, "revision": None,
        "started": None, "finished": None, "statement_digest": ELSEWHERE, "subject": AMD64,
        "subject_matches": True, "signed": True}
    return judged(require_provenance, conf, entry(Evidence(CHECKED, builds=(Build(**(values | fields)),))))


def test_a_signed_statement_from_an_allowed_builder_and_source_passes() -> None:
    assert _built(conf={"builders": [f"{RUNNER}*"], "sources": ["https://github.com/acme/*"]}) == []


def test_no_statement_says_when_it_was_looked_for() -> None:
    [message] = judged(require_provenance, {}, entry(Evidence(CHECKED)))
    assert "had no provenance" in message and CHECKED in message


def test_an_unsigned_statement_counts_only_where_allowed() -> None:
    [message] = _built(signed=False)
    assert "an unsigned statement, which the policy does not allow" in message
    assert _built(signed=False, conf={"allow-unsigned": True}) == []


def test_a_statement_whose_signature_failed_never_counts() -> None:
    [message] = _built(signed=False, problem="bad signature", conf={"allow-unsigned": True})
    assert "did not verify: bad signature" in message


def test_a_builder_or_source_not_listed_is_named() -> None:
    assert any("was built by https://evil.example/ci" in m for m in _built(
        builder="https://evil.example/ci", conf={"builders": [f"{RUNNER}*"]}))
    assert any("was built from an unnamed source" in m for m in _built(
        source=None, conf={"sources": ["https://github.com/acme/*"]}))


def test_a_statement_about_another_image_is_an_objection() -> None:
    messages = _built(subject_matches=False, subject=ELSEWHERE)
    assert any(f"is about {ELSEWHERE}, not this image" in m for m in messages)
