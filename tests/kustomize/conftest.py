"""The kustomize fixtures, copied to a scratch folder; kubectl (tests/conftest.py) builds them."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "testdata" / "kustomize"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kustomize fixtures copied to a scratch folder, which is the current one; builds cached inside it."""
    shutil.copytree(FIXTURES, tmp_path / "k")
    monkeypatch.chdir(tmp_path / "k")
    monkeypatch.setenv("PINGUARD_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "k"
