"""What changed between two records of an image's provenance: what `verify` and `update` report.

Standard library only, like the model it compares.
"""
from __future__ import annotations

from pinguard.provenance.model import Evidence


def lost(before: Evidence, now: Evidence) -> list[str]:
    """What held when the image was locked and no longer does: `verify` findings for the same digest."""
    problems: list[str] = []
    verified_now = {(s.kind, s.identity, s.issuer) for s in now.signatures if s.verified}
    for signature in before.signatures:
        if signature.verified and (signature.kind, signature.identity, signature.issuer) not in verified_now:
            same = (s for s in now.signatures if (s.kind, s.identity) == (signature.kind, signature.identity))
            why = next((s.problem for s in same if s.problem), "it is no longer found")
            problems.append(f"the {signature.kind} signature by {signature.identity} no longer verifies: {why}")
    if _builds(before) != _builds(now):
        problems.append(f"its provenance changed: {_describe(before)} -> {_describe(now)}")
    if {s.digest for s in before.sboms} - {s.digest for s in now.sboms}:
        problems.append("an SBOM recorded in the lock is no longer found")
    return problems


def differences(before: Evidence | None, now: Evidence | None) -> list[tuple[str, str, str]]:
    """(what, old, new) for a rebuild: builder, source, revision, signatures, SBOMs; only what differs."""
    if before is None and now is None:
        return []
    rows = [
        ("builder", _field(before, "builder"), _field(now, "builder")),
        ("source", _field(before, "source"), _field(now, "source")),
        ("revision", _field(before, "revision"), _field(now, "revision")),
        ("signed by", _signers(before), _signers(now)),
        ("SBOMs", _count(before, "sboms"), _count(now, "sboms")),
    ]
    return [row for row in rows if row[1] != row[2]]


def _builds(evidence: Evidence) -> set[tuple[str | None, str | None, str | None, bool]]:
    return {(b.builder, b.source, b.revision, b.subject_matches) for b in evidence.builds}


def _describe(evidence: Evidence) -> str:
    builds = sorted(_builds(evidence), key=str)
    if not builds:
        return "none"
    return "; ".join(f"{builder or '?'} from {source or '?'}@{revision or '?'}"
                     for builder, source, revision, _ in builds)


def _field(evidence: Evidence | None, name: str) -> str:
    if evidence is None:
        return "not checked"
    values = sorted({str(getattr(build, name)) for build in evidence.builds if getattr(build, name)})
    return ", ".join(values) or "none"


def _signers(evidence: Evidence | None) -> str:
    if evidence is None:
        return "not checked"
    signers = sorted({f"{s.kind} {s.identity}" for s in evidence.signatures if s.verified})
    return ", ".join(signers) or "none"


def _count(evidence: Evidence | None, name: str) -> str:
    return "not checked" if evidence is None else str(len(getattr(evidence, name)))


