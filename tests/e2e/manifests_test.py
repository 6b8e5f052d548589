"""The training manifests pass `check --policy aws-dlc` once pinned against a lock of the stand-in registry."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for

TRAINING = Path(__file__).resolve().parents[2] / "training"
MANIFESTS = ("rayjob.yaml", "raycluster.yaml", "rbac.yaml")


def test_pinned_training_manifests_pass_the_aws_dlc_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "training").mkdir()
    for name in MANIFESTS:
        shutil.copy(TRAINING / name, tmp_path / "training" / name)
    monkeypatch.chdir(tmp_path)
    lockfile.write(tmp_path / "pinguard.lock", lock_for(scan_paths(["training"]).found))
    out = io.StringIO()
    assert main(["check", "--policy", "aws-dlc", "training"], env={}, stdout=out) == 1  # not pinned yet
    assert main(["pin", "training"], env={}, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    out = io.StringIO()
    assert main(["check", "--policy", "aws-dlc", "training"], env={}, stdout=out) == 0, out.getvalue()
    assert "error" not in out.getvalue().replace("0 errors", "")  # the moving DLC tag is only a warning
