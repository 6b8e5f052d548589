"""The gate before anything runs: the manifest passes `check` against the lock, or nothing is launched."""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pinguard.errors import PinguardError
from pinguard.findings import ERROR
from pinguard.lock.lockfile import Lock
from pinguard.options import Options
from pinguard.policy import Sidecar, for_command
from pinguard.policy.run import lint
from pinguard.read.paths import ScannedFile
from pinguard.report import FORMATS
from pinguard.sources import kubernetes

DEFAULT_POLICY = "aws-dlc"
# `run` pins every image from the lock: what it cannot resolve or find there stops it, whatever the policy says.
_ALWAYS_ERRORS = ("templated", "not-locked")


@dataclass(frozen=True)
class Gated:
    """A manifest that passed, with the lock it passed against."""

    manifest: ScannedFile
    lock: Lock
    lock_sha256: str  # hex, of the lockfile's bytes: `sha256sum pinguard.lock` says the same
    sidecars: tuple[Sidecar, ...] = ()  # the policy's: injected containers that may run unlocked


def gate(manifest: str, options: Options, policies: Sequence[Path]) -> Gated | None:
    """The manifest and its lock when `check` finds no error; else the findings printed (text) and None."""
    if not Path(manifest).is_file():
        raise PinguardError(f"{manifest}: no such file")
    policy = for_command(policies, DEFAULT_POLICY, project=False)  # its preset, never .pinguard.yaml
    policy = replace(policy, rules={**policy.rules, **{rule: {**policy.rules[rule], "level": ERROR}
                                                         for rule in _ALWAYS_ERRORS}})
    result = lint([manifest], policy, options.lockfile, keep_files=True)
    if result.lock_text is None or not len(result.lock):
        raise PinguardError(f"{options.lockfile}: no locked images: run `pinguard lock` first")
    if result.errors:
        raise PinguardError(result.errors[0])
    if [scanned.kind for scanned in result.files] != [kubernetes.SOURCE]:
        raise PinguardError(f"{manifest}: not a Kubernetes manifest")
    found = result.findings
    errors = [f for f in found if f.severity == ERROR]
    if errors:
        FORMATS["text"](found, options.stdout)
        print(f"pinguard: {manifest}: refused: nothing was launched; fix the errors above", file=options.stderr)
        return None
    if found and not options.quiet:
        FORMATS["text"](found, options.stderr)  # warnings; stdout may be the rendered YAML
    # The text is the file's bytes decoded as UTF-8, so encoding it again gives them back exactly.
    return Gated(result.files[0], result.lock, hashlib.sha256(result.lock_text.encode("utf-8")).hexdigest(),
                 policy.sidecars)
