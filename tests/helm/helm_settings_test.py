"""How each chart is deployed: as the policy says, else its values.yaml and each values*.yaml over it."""
from __future__ import annotations

from pathlib import Path

from pinguard.helm.settings import Deployment, HelmSettings


def _chart(root: Path, *values: str) -> Path:
    root.mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    for name in values:
        (root / name).write_text("image: {}\n")
    return root


def test_by_default_values_yaml_then_each_other_values_file_over_it(tmp_path: Path) -> None:
    root = _chart(tmp_path / "app", "values.yaml", "values-staging.yml", "values-prod.yaml", "other.yaml")
    (root / "values-folder.yaml").mkdir()
    base = root / "values.yaml"
    assert HelmSettings().of_chart(root) == [
        Deployment(root, (base,)), Deployment(root, (base, root / "values-prod.yaml")),
        Deployment(root, (base, root / "values-staging.yml"))]


def test_without_values_yaml_each_values_file_is_deployed_alone(tmp_path: Path) -> None:
    root = _chart(tmp_path / "app", "values-prod.yaml")
    assert HelmSettings().of_chart(root) == [Deployment(root, ()), Deployment(root, (root / "values-prod.yaml",))]


def test_the_policy_says_how_a_chart_it_names_is_deployed(tmp_path: Path) -> None:
    root = _chart(tmp_path / "app", "values.yaml", "values-prod.yaml", "deploy.yaml")
    named = Deployment(tmp_path / "app" / ".." / "app", (root / "deploy.yaml",), (("image.tag", "1.2.3"),))
    other = Deployment(tmp_path / "other", (tmp_path / "other" / "values.yaml",))
    assert HelmSettings(deployments=(other, named)).of_chart(root) == [named]  # the same folder, however spelled
