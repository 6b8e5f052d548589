"""How each chart is deployed: as the policy says, else its values.yaml and each values*.yaml over it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pinguard.helm.settings import ClusterContext, Deployment, HelmSettings
from pinguard.policy.load import PolicyError, load


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


def test_the_cluster_named_becomes_the_flags_of_helm_template() -> None:
    named = ClusterContext("1.30.0", ("monitoring.coreos.com/v1", "cert-manager.io/v1"), "prod", "app", True)
    assert named.arguments() == ["--kube-version", "1.30.0", "--api-versions", "monitoring.coreos.com/v1",
                                 "--api-versions", "cert-manager.io/v1", "--namespace", "prod", "--is-upgrade"]
    assert ClusterContext().arguments() == []  # the release name is no flag: `helm template NAME CHART`


def test_the_policy_names_the_cluster_per_deployment(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("helm:\n  charts:\n    - chart: app\n      kube-version: '1.30.0'\n"
                      "      api-versions: [monitoring.coreos.com/v1]\n      namespace: prod\n      release: web\n"
                      "      is-upgrade: true\n    - chart: other\n")
    named, bare = load([policy]).helm.deployments
    assert named.context == ClusterContext("1.30.0", ("monitoring.coreos.com/v1",), "prod", "web", True)
    assert bare.context is None  # none named: a bare render's defaults


@pytest.mark.parametrize(("entry", "message"), [
    ("kube-version: 1.30", "charts[0].kube-version: expected a string (quote a version"),
    ("api-versions: monitoring.coreos.com/v1", "charts[0].api-versions: expected a list of API versions"),
    ("is-upgrade: 'yes'", "charts[0].is-upgrade: expected true or false"),
    ("namespace: [a]", "charts[0].namespace: expected a string"),
    ("kube_version: '1.30'", "charts[0]: unknown key 'kube_version'"),
])
def test_a_cluster_named_wrong_is_a_policy_error_naming_the_key(tmp_path: Path, entry: str, message: str) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"helm:\n  charts:\n    - chart: app\n      {entry}\n")
    with pytest.raises(PolicyError, match=re.escape(f"invalid policy {policy}: helm.{message}")):
        load([policy])


def test_the_policy_names_values_files_whose_chart_reads_digest_by_glob() -> None:
    settings = HelmSettings(digest_read=("deploy/*.yaml", "charts/*/values-*.yaml"))
    assert settings.chart_reads_digest("deploy/values.yaml")
    assert settings.chart_reads_digest("charts/api/values-prod.yaml")
    assert not settings.chart_reads_digest("Deploy/values.yaml")  # as written, on every system
    assert not HelmSettings().chart_reads_digest("deploy/values.yaml")
