"""What changed between two records of an image's provenance: what `verify` and `update` report.

Standard library only, like the model it compares.
"""
from __future__ import annotations

from pinguard.provenance.evidence import OUTDATED, Build, Evidence, Signature


def lost(before: Evidence, now: Evidence) -> list[str]:
    """What held when the image was locked and no longer does: `verify` findings for the same digest."""
    problems = [f"its provenance was {OUTDATED}"] if before.outdated else []
    verified_now = {_signer(s): s for s in now.signatures if s.verified}
    for signature in before.signatures:
        if not signature.verified or signature.subject is None:
            continue
        found = verified_now.get(_signer(signature))
        if found is None:
            problems.append(_signature_lost(signature, now))
        elif signature.reference is not None and found.reference != signature.reference:
            problems.append(f"the {signature.kind} signature by {signature.identity} on {signature.subject} names "
                            f"{found.reference or 'no image'} now, not {signature.reference} as the lock records")
    if _builds(before) != _builds(now):
        problems.append(f"its provenance changed: {_describe(before)} -> {_describe(now)}")
    recorded = {(s.digest, s.subject) for s in before.sboms if s.subject is not None}
    if recorded - {(s.digest, s.subject) for s in now.sboms}:
        problems.append("an SBOM the lock records is not found at the registry" + _unread(now))
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


def _signer(signature: Signature) -> tuple[str, str | None, str | None, str | None]:
    return (signature.kind, signature.identity, signature.issuer, signature.subject)


def _signature_lost(signature: Signature, now: Evidence) -> str:
    """Why a signature the lock records as verified is not verified now."""
    what = f"the {signature.kind} signature by {signature.identity}"
    same = (s for s in now.signatures if (s.kind, s.identity, s.subject) == (
        signature.kind, signature.identity, signature.subject))
    problem = next((s.problem for s in same if s.problem), None)
    if problem is not None:
        return f"{what} on {signature.subject} no longer verifies: {problem}"
    return f"{what} on {signature.subject} is recorded in the lock but not found at the registry{_unread(now)}"


def _unread(now: Evidence) -> str:
    return f" ({now.unread})" if now.unread else ""


def _builds(evidence: Evidence) -> set[tuple[str | None, str | None, str | None, str, bool, bool, str | None]]:
    return {(b.builder, b.source, b.revision, b.subject, b.subject_matches, b.signed, b.problem)
            for b in evidence.builds}


def _describe(evidence: Evidence) -> str:
    return "; ".join(sorted({_build(build) for build in evidence.builds})) or "none"


def _build(build: Build) -> str:
    signed = "signed" if build.signed else "signature failed" if build.failed else "unsigned"
    return (f"{build.builder or '?'} from {build.source or '?'}@{build.revision or '?'} "
            f"({signed}, about {build.subject})")


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
