"""Which chart a file belongs to: the outermost Chart.yaml above it, looked up once per folder."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.helm.roots import ChartRoots, outermost_chart


def _chart(root: Path, name: str = "app") -> Path:
    root.mkdir(parents=True)
    (root / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n")
    return root


def test_a_file_belongs_to_the_outermost_chart_above_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _chart(tmp_path / "app")
    sub = _chart(root / "charts" / "db", "db")
    assert outermost_chart(sub / "values.yaml") == root  # a subchart's files are its parent's
    assert outermost_chart(tmp_path / "values.yaml") is None
    monkeypatch.chdir(tmp_path)
    assert outermost_chart(root / "ci" / "values.yaml") == Path("app")  # relative to where pinguard runs


def test_the_files_of_a_folder_share_one_look(tmp_path: Path) -> None:
    root = _chart(tmp_path / "app")
    roots = ChartRoots()
    assert roots.of(root / "values.yaml") == root
    (root / "Chart.yaml").unlink()
    assert roots.of(root / "values-prod.yaml") == root  # the folder was looked at once this run
    assert roots.of(tmp_path / "pod.yaml") is None
