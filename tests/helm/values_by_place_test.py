"""Values files found by what they are: any YAML in a chart's folder, or one the policy deploys, with Helm or
without."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import main
from tests.helm.chartfiles import POD


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "env").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    (chart / "templates" / "pod.yaml").write_text(POD)
    (chart / "values.yaml").write_text('image:\n  repository: nginx\n  tag: "1.25.3@sha256:' + "a" * 64 + '"\n')
    (chart / "env" / "prod.yaml").write_text('image:\n  repository: nginx\n  tag: "1.27.0"\n')
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "vars.yaml").write_text('web:\n  image:\n    repository: redis\n    tag: "7.2"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PINGUARD_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _unpinned(*args: str) -> list[str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", "--format", "text", *args], stdout=out, stderr=err)
    assert code == 1 and err.getvalue() == ""
    return [line.partition(" error: ")[0] + " " + line.partition("`")[2].partition("`")[0]
            for line in out.getvalue().splitlines() if line.endswith("[unpinned]")]


def _deploy(*values: str) -> None:
    Path(".pinguard.yaml").write_text(f"helm:\n  charts:\n    - chart: chart\n      values: [{', '.join(values)}]\n")


def test_a_values_file_by_its_place_and_an_image_mapping_elsewhere_are_references(tree: Path) -> None:
    assert _unpinned("chart", "deploy") == ["chart/env/prod.yaml:2:15: nginx", "deploy/vars.yaml:3:17: redis"]


def test_with_helm_a_values_file_not_deployed_is_read_as_values(helm: str, tree: Path) -> None:
    assert _unpinned("--helm", helm, "chart") == ["chart/env/prod.yaml:2:15: nginx"]


def test_with_helm_a_values_file_the_policy_deploys_is_judged_in_the_render(helm: str, tree: Path) -> None:
    _deploy("values.yaml", "env/prod.yaml")
    assert _unpinned("--helm", helm, "chart") == ["chart/env/prod.yaml:3:9: nginx:1.27.0"]  # as rendered


def test_a_values_file_the_policy_deploys_outside_the_chart_is_values(helm: str, tree: Path) -> None:
    Path("deploy/prod.yaml").write_text('image:\n  tag: "1.26.0"\n')
    _deploy("values.yaml", "../deploy/prod.yaml")
    assert _unpinned("--helm", helm, "deploy/prod.yaml") == ["deploy/prod.yaml:2:9: nginx:1.26.0"]  # rendered
