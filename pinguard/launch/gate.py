"""The gate before anything runs: the manifest passes `check` against the lock, or nothing is launched."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from pinguard.errors import PinguardError
from pinguard.findings import ERROR, Finding
from pinguard.lock.lockfile import Lock
from pinguard.policy.lint import lint
from pinguard.policy.model import Policy
from pinguard.scan.paths import ScannedFile
from pinguard.sources import kubernetes

# `run` pins every image from the lock: what it cannot resolve or find there stops it, whatever the policy says.
_ALWAYS_ERRORS = ("templated", "not-locked")


@dataclass(frozen=True)
class Gated:
    """A manifest judged against its lock: it passes unless a finding is an error."""

    manifest: ScannedFile
    lock: Lock
    lock_sha256: str  # hex, of the lockfile's bytes: `sha256sum pinguard.lock` says the same
    findings: tuple[Finding, ...] = ()

    @property
    def passed(self) -> bool:
        return not any(finding.severity == ERROR for finding in self.findings)


def gate(manifest: str, lockfile: Path, policy: Policy) -> Gated:
    """The manifest, its lock and what `check` finds of it under `policy`, with `_ALWAYS_ERRORS` made errors."""
    if not Path(manifest).is_file():
        raise PinguardError(f"{manifest}: no such file")
    policy = replace(policy, rules={**policy.rules, **{rule: {**policy.rules[rule], "level": ERROR}
                                                         for rule in _ALWAYS_ERRORS}})
    result = lint([manifest], policy, lockfile, keep_files=True)
    if result.lock_text is None or not len(result.lock):
        raise PinguardError(f"{lockfile}: no locked images: run `pinguard lock` first")
    if result.errors:
        raise PinguardError(result.errors[0])
    if [scanned.kind for scanned in result.files] != [kubernetes.SOURCE]:
        raise PinguardError(f"{manifest}: not a Kubernetes manifest")
    # The text is the file's bytes decoded as UTF-8, so encoding it again gives them back exactly.
    return Gated(result.files[0], result.lock, hashlib.sha256(result.lock_text.encode("utf-8")).hexdigest(),
                 tuple(result.findings))
