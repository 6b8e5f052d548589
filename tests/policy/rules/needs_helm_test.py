"""needs-helm of a chart's values read without Helm: each image a pin would write there, and nothing else."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.pin.plan import NEEDS_HELM
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for, locked_test_digest
from tests.policy.helpers import check_rule, places

DIGEST = locked_test_digest("docker.io/library/nginx", "1.25")
OTHER = "sha256:" + "f" * 64


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_helm: str) -> Path:
    """The current folder, with no helm on PATH."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("in_chart", "tag", "locked", "reported"),
    [
        # in a chart  tag written          nginx:1.25 locked  a pin would write it
        (True,        "1.25",              True,              True),
        (True,        "1.25",              False,             True),   # once it is locked
        (True,        f"1.25@{DIGEST}",    True,              False),  # pinned to its locked digest
        (True,        f"1.25@{OTHER}",     True,              True),   # pinned elsewhere: pin would replace it
        (True,        f"1.25@{OTHER}",     False,             False),  # not-locked's: `lock` records the digest written
        (False,       "1.25",              True,              False),  # values of no chart: `pin` writes them
    ],
)
def test_rule(folder: Path, in_chart: bool, tag: str, locked: bool, reported: bool) -> None:
    (folder / "lockme.yaml").write_text("kind: Pod\nspec:\n  containers:\n  - image: nginx:1.25\n")
    lock = lock_for(scan_paths(["lockme.yaml"]).found if locked else [])
    (folder / "lockme.yaml").unlink()
    if in_chart:
        (folder / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    found = check_rule(folder, "needs-helm", {"values.yaml": f"image:\n  repository: nginx\n  tag: \"{tag}\"\n"},
                       lock=lock)
    if reported:
        assert places(found) == [("values.yaml", 2, 15)]
        assert NEEDS_HELM in found[0].message and found[0].rule == "needs-helm"
    else:
        assert found == []
