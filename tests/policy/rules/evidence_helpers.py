"""What the tests of the provenance rules share: one locked image, its evidence, and a rule judging it."""
from __future__ import annotations

from typing import Any

from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.policy.rules.common import Context
from pinguard.provenance.evidence import Evidence
from pinguard.reference import parse
from pinguard.sources.base import Found, Span

NAME, TAG = "ghcr.io/acme/trainer", "1.0"
INDEX, AMD64, ARM64, ELSEWHERE = ("sha256:" + c * 64 for c in "abce")
CHECKED = "2026-11-30T00:00:00Z"
FOUND = Found("pod.yaml", "kubernetes", Span(0, 1, 5, 12), f"{NAME}:{TAG}", parse(f"{NAME}:{TAG}"))


def entry(evidence: Evidence | None, platforms: dict[str, str] | None = None) -> LockEntry:
    """`NAME:TAG` locked to the index INDEX of `platforms` (amd64 alone unless told), with `evidence`."""
    platforms = {"linux/amd64": AMD64} if platforms is None else platforms
    return LockEntry(NAME, TAG, INDEX, "application/vnd.oci.image.index.v1+json", 0, "other", None, CHECKED,
                     platforms, evidence)


def judged(rule: Any, conf: dict[str, Any], locked: LockEntry) -> list[str]:
    """The messages of `rule`, with `conf` over its defaults, about FOUND with only `locked` in the lock."""
    context = Context(Lock().with_entries([locked]), "pinguard.lock")
    return [problem.message for problem in rule.check({**rule.DEFAULT, **conf}, FOUND, context)]
