"""The gate before anything runs: a manifest passes only when `check` finds no error against its lock."""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.launch.gate import gate
from pinguard.lock import lockfile
from pinguard.policy.load import for_command
from pinguard.policy.model import Policy
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for, locked_test_digest

DIGEST = locked_test_digest("docker.io/library/nginx", "1.25")
POD = "kind: Pod\nspec:\n  containers:\n    - name: web\n      image: {image}\n"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """nginx:1.25 locked in pinguard.lock; the manifest written as each test says."""
    monkeypatch.chdir(tmp_path)
    Path("locked.yaml").write_text(POD.format(image="nginx:1.25"))
    lockfile.write(Path("pinguard.lock"), lock_for(scan_paths(["locked.yaml"]).found))
    yield tmp_path


def _policy() -> Policy:
    return for_command([], project=False)


def test_a_pinned_manifest_passes_with_the_sha256_of_the_lock(work: Path) -> None:
    Path("pod.yaml").write_text(POD.format(image=f"nginx:1.25@{DIGEST}"))
    gated = gate("pod.yaml", Path("pinguard.lock"), _policy())
    assert gated.passed, gated.findings
    assert gated.lock_sha256 == hashlib.sha256(Path("pinguard.lock").read_bytes()).hexdigest()
    assert [found.value for found in gated.manifest.found] == [f"nginx:1.25@{DIGEST}"] and len(gated.lock) == 1


def test_an_image_the_lock_does_not_hold_fails_whatever_the_policy_says(work: Path) -> None:
    Path("pod.yaml").write_text(POD.format(image="redis:7"))
    policy = _policy()
    quiet = Policy(rules={**policy.rules, "not-locked": {**policy.rules["not-locked"], "level": "off"}})
    gated = gate("pod.yaml", Path("pinguard.lock"), quiet)
    assert not gated.passed and "not-locked" in {finding.rule for finding in gated.findings}


@pytest.mark.parametrize(("manifest", "lock", "message"), [
    ("missing.yaml", "pinguard.lock", "missing.yaml: no such file"),
    ("locked.yaml", "none.lock", "none.lock: no locked images: run `pinguard lock` first"),
    ("Dockerfile", "pinguard.lock", "Dockerfile: not a Kubernetes manifest"),
])
def test_what_cannot_be_gated_is_a_usage_error(work: Path, manifest: str, lock: str, message: str) -> None:
    Path("Dockerfile").write_text("FROM nginx:1.25\n")
    with pytest.raises(PinguardError, match=message):
        gate(manifest, Path(lock), _policy())
