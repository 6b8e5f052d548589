"""The gate before anything runs: the manifest passes `check` against the lock, or nothing is launched."""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pinguard import lockfile
from pinguard.errors import PinguardError
from pinguard.findings import ERROR
from pinguard.lockfile import Lock
from pinguard.options import Options
from pinguard.policy import load, preset
from pinguard.policy.rules.common import Context
from pinguard.policy.run import findings as policy_findings
from pinguard.report import FORMATS
from pinguard.scanning import ScannedFile, scan
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


def gate(manifest: str, options: Options, policies: Sequence[Path]) -> Gated | None:
    """The manifest and its lock when `check` finds no error; else the findings printed (text) and None."""
    if not Path(manifest).is_file():
        raise PinguardError(f"{manifest}: no such file")
    policy = load(policies or [preset(DEFAULT_POLICY)])
    policy = replace(policy, rules={**policy.rules, **{rule: {**policy.rules[rule], "level": ERROR}
                                                         for rule in _ALWAYS_ERRORS}})
    lock = lockfile.read(options.lockfile)
    if not len(lock):
        raise PinguardError(f"{options.lockfile}: no locked images: run `pinguard lock` first")
    result = scan([manifest])
    if result.errors:
        raise PinguardError(result.errors[0])
    if [scanned.kind for scanned in result.files] != [kubernetes.SOURCE]:
        raise PinguardError(f"{manifest}: not a Kubernetes manifest")
    data = options.lockfile.read_bytes()
    context = Context(lock, options.lockfile.as_posix(), policy.tag_rules)
    found = policy_findings(policy, result.files, context, data.decode("utf-8"), whole_tree=False)
    errors = [f for f in found if f.severity == ERROR]
    if errors:
        FORMATS["text"](found, options.stdout)
        print(f"pinguard: {manifest}: refused: nothing was launched; fix the errors above", file=options.stderr)
        return None
    if found and not options.quiet:
        FORMATS["text"](found, options.stderr)  # warnings; stdout may be the rendered YAML
    return Gated(result.files[0], lock, hashlib.sha256(data).hexdigest())
