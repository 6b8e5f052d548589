"""The kubectl that builds kustomizations in these tests: the official one, from npm (scripts/install_helm.sh)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

KUBECTL = Path(__file__).resolve().parents[2] / ".venv" / "kubectl" / "kubectl"
FIXTURES = Path(__file__).resolve().parents[1] / "testdata" / "kustomize"


@pytest.fixture
def kubectl() -> str:
    """kubectl 1.35 (kustomize 5.7); in CI its absence fails the test, since setup installs it."""
    if not KUBECTL.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"no kubectl at {KUBECTL}: scripts/install_helm.sh installs it")
        pytest.skip(f"no kubectl at {KUBECTL} (scripts/install_helm.sh installs it)")
    return str(KUBECTL)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kustomize fixtures copied to a scratch folder, which is the current one; builds cached inside it."""
    shutil.copytree(FIXTURES, tmp_path / "k")
    monkeypatch.chdir(tmp_path / "k")
    monkeypatch.setenv("PINGUARD_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "k"
