"""`check` and `pin` of values files whose chart is not in this repository: the policy names it by repository,
helm pulls it once into the cache, renders it, and `pin` writes overrides into the values files only."""
from __future__ import annotations

import hashlib
import io
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.policy.load import PolicyError, for_command, load
from pinguard.scan.paths import ScanSettings, scan_paths
from testing.charts import IMAGES, ChartRepository, package, serve_charts, write_chart
from testing.lockdata import lock_for, locked_test_digest
from testing.registry import start_registry
from tests.conftest import require_registry_tools

PROD = "# production\nreplicas: 3\nimage:\n  pullPolicy: Always\n"
NGINX = locked_test_digest("docker.io/library/nginx", "1.25")
EXPORTER = locked_test_digest("example.com/exporter", "v0.15.0")
PINNED = (f'# production\nreplicas: 3\nimage:\n  digest: "{NGINX}"\n  pullPolicy: Always\n'
          f'metrics:\n  image:\n    tag: "v0.15.0@{EXPORTER}"\n')


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@contextmanager
def _served(helm: str, tmp_path: Path) -> Iterator[ChartRepository]:
    folder = tmp_path / "served"
    package(helm, write_chart(tmp_path / "src"), folder)
    with serve_charts(helm, folder) as repository:
        yield repository


def _workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str, *values: str) -> Path:
    """A repository holding values files and a policy naming their chart by `entry`, and no chart."""
    work = tmp_path / "work"
    for name in values or ("values-prod.yaml",):
        (work / "deploy" / "demo").mkdir(parents=True, exist_ok=True)
        (work / "deploy" / "demo" / name).write_text(PROD)
    listed = ", ".join(f"deploy/demo/{name}" for name in values or ("values-prod.yaml",))
    charts = "".join(f"    - {entry}\n      values: [{name}]\n" for name in listed.split(", "))
    (work / ".pinguard.yaml").write_text(f"extends: default\nhelm:\n  charts:\n{charts}")
    monkeypatch.chdir(work)
    monkeypatch.setenv("PINGUARD_CACHE_DIR", str(tmp_path / "cache"))
    return work


def _lock(helm: str, tmp_path: Path) -> None:
    """The lock of what the chart renders, made from a scan as `lock` makes it (test digests, no registry)."""
    policy = for_command([])
    helm_settings = replace(policy.helm, binary=helm, cache_dir=tmp_path / "cache")
    result = scan_paths(["."], ScanSettings(helm=helm_settings))
    assert result.errors == []
    assert {str(found.reference) for found in result.found if found.reference} == set(IMAGES)
    lockfile.write(Path("pinguard.lock"), lock_for(result.found))


def _tree(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _images(helm: str, chart: Path, values: Path) -> list[str]:
    done = subprocess.run([helm, "template", "release-name", str(chart), "--values", str(values)],
                          capture_output=True, text=True, timeout=60, check=True)
    return sorted(container["image"] for document in yaml.safe_load_all(done.stdout) if document
                  for container in document["spec"]["template"]["spec"]["containers"])


def test_check_and_pin_values_of_a_chart_pulled_from_a_repository(helm: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with _served(helm, tmp_path) as repository:
        work = _workspace(tmp_path, monkeypatch, f"repo: {repository.url}\n      chart: demo\n      version: 1.2.3")
        _lock(helm, tmp_path)
        code, out, _ = _run("check", "--helm", helm)
        assert code == 1
        for image in IMAGES:  # at the values file that deploys the chart, never in the cache
            assert (f"deploy/demo/values-prod.yaml:1:1: error: `{image}` (as the chart renders it) has no digest: "
                    "run `pinguard pin`") in out
        assert str(tmp_path / "cache") not in out
        cache = tmp_path / "cache" / "helm" / "charts"
        pulled = _tree(cache)

        code, out, err = _run("pin", "--helm", helm)
        assert (code, err) == (0, "")
        assert (work / "deploy" / "demo" / "values-prod.yaml").read_text() == PINNED
        assert _tree(cache) == pulled  # the chart's own values are never written
        chart = next(cache.iterdir()) / "chart"
        assert _images(helm, chart, work / "deploy" / "demo" / "values-prod.yaml") == [
            f"docker.io/library/nginx@{NGINX}", f"example.com/exporter:v0.15.0@{EXPORTER}"]

        assert _run("pin", "--helm", helm)[0] == 0
        assert (work / "deploy" / "demo" / "values-prod.yaml").read_text() == PINNED  # a second pin changes nothing
        code, out, _ = _run("check", "--helm", helm)
        assert code == 0, out
        assert [request.partition("?")[0] for request in repository.requests] == [
            "GET /index.yaml", "GET /demo-1.2.3.tgz"]  # pulled once: every later run found it in the cache


def test_each_values_file_of_a_remote_chart_gets_its_own_overrides(helm: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with _served(helm, tmp_path) as repository:
        work = _workspace(tmp_path, monkeypatch, f"repo: {repository.url}\n      chart: demo\n      version: 1.2.3",
                          "values-prod.yaml", "values-staging.yaml")
        _lock(helm, tmp_path)
        code, out, _ = _run("check", "--helm", helm)
        assert code == 1
        for name in ("values-prod.yaml", "values-staging.yaml"):
            assert f"deploy/demo/{name}:1:1: error: `{IMAGES[1]}` (as the chart renders it) has no digest" in out
        assert _run("pin", "--helm", helm)[0] == 0
        assert len(repository.requests) == 2
    for name in ("values-prod.yaml", "values-staging.yaml"):
        assert (work / "deploy" / "demo" / name).read_text() == PINNED


def test_a_chart_that_cannot_be_pulled_is_said_so_at_its_values_and_never_pinned(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _served(helm, tmp_path) as repository:
        work = _workspace(tmp_path, monkeypatch, f"repo: {repository.url}\n      chart: demo\n      version: 9.9.9")
        (work / "deploy" / "demo" / "values-prod.yaml").write_text("image:\n  repository: nginx\n  tag: '1.25'\n")
        code, out, _ = _run("check", "--helm", helm)
        assert code == 1
        assert (f"deploy/demo/values-prod.yaml:1:1: warning: cannot be checked: helm pull {repository.url} demo "
                "--version 9.9.9 failed: ") in out
        assert "; read as text, and not pinned [templated]" in out
        assert "deploy/demo/values-prod.yaml:2:15: error: `nginx` has no digest" in out  # read as without Helm
        lockfile.write(Path("pinguard.lock"), lock_for(scan_paths(["deploy"]).found))
        before = (work / "deploy" / "demo" / "values-prod.yaml").read_text()
        code, _, err = _run("pin", "--helm", helm)
        assert code == 1
        assert "not pinned: helm pull" in err
        assert (work / "deploy" / "demo" / "values-prod.yaml").read_text() == before


def test_a_chart_is_pulled_by_oci_from_a_registry(helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_registry_tools()
    archive = package(helm, write_chart(tmp_path / "src"), tmp_path / "served")
    # Helm 3 reaches a registry on loopback over plain HTTP; Helm 4 over TLS, trusting the CA as Go does.
    tls = subprocess.run([helm, "version", "--short"], capture_output=True, text=True, timeout=60,
                         check=True).stdout.startswith("v4")
    with start_registry(tmp_path / "registry", tls=tls) as registry:
        trust = ["--ca-file", registry.ca_file] if registry.ca_file else []
        subprocess.run([helm, "push", str(archive), f"oci://{registry.host}/charts", *trust], check=True,
                       capture_output=True, timeout=60)
        if registry.ca_file:
            monkeypatch.setenv("SSL_CERT_FILE", registry.ca_file)
        work = _workspace(tmp_path, monkeypatch, f"chart: oci://{registry.host}/charts/demo\n      version: 1.2.3")
        _lock(helm, tmp_path)
        assert _run("pin", "--helm", helm)[0] == 0
    assert (work / "deploy" / "demo" / "values-prod.yaml").read_text() == PINNED
    assert _run("pin", "--helm", helm, "--dry-run")[:2] == (0, "")  # from the cache: the registry is gone


@pytest.mark.parametrize(("entry", "message"), [
    pytest.param({"chart": "oci://r.example/charts/redis"}, "helm.charts[0].version: a chart not in this repository "
                 "needs its exact version, as SemVer (`1.2.3`; quoted, `\"1.10.0\"`; no range), none given",
                 id="no-version"),
    pytest.param({"chart": "oci://r.example/charts/redis", "version": "^1.2"}, "helm.charts[0].version: a chart not "
                 "in this repository needs its exact version", id="a-range"),
    pytest.param({"chart": "oci://r.example/charts/redis", "version": 1.2}, "got '1.2'", id="a-number"),
    pytest.param({"chart": "oci://r.example/charts/redis", "version": "--set=x"}, "helm.charts[0].version",
                 id="a-flag"),
    pytest.param({"chart": "oci://user:secret@r.example/charts/redis", "version": "1.0.0"},
                 "helm.charts[0].chart: expected `oci://HOST[:PORT]/PATH/NAME`", id="oci-credentials"),
    pytest.param({"chart": "oci://r.example/../redis", "version": "1.0.0"}, "helm.charts[0].chart: expected `oci://",
                 id="oci-dot-dot"),
    pytest.param({"repo": "https://user:secret@charts.example", "chart": "redis", "version": "1.0.0"},
                 "helm.charts[0].repo: expected the URL of a chart repository", id="repo-credentials"),
    pytest.param({"repo": "file:///etc", "chart": "redis", "version": "1.0.0"},
                 "helm.charts[0].repo: expected the URL of a chart repository, http:// or https://", id="file-url"),
    pytest.param({"repo": "https://charts.example/a/../b", "chart": "redis", "version": "1.0.0"},
                 "helm.charts[0].repo", id="repo-dot-dot"),
    pytest.param({"repo": "https://charts.example", "chart": "../redis", "version": "1.0.0"},
                 "helm.charts[0].chart: expected the chart's name in https://charts.example", id="a-path-for-a-name"),
    pytest.param({"repo": "https://charts.example", "chart": "-redis", "version": "1.0.0"},
                 "helm.charts[0].chart: expected the chart's name", id="a-name-read-as-a-flag"),
    pytest.param({"repo": "https://charts.example", "chart": "redis", "version": "1.0.0"},
                 "helm.charts[0].values: expected a list of values files, relative to the policy file", id="no-values"),
    pytest.param({"chart": "deploy/app", "version": "1.0.0"}, "helm.charts[0].version: only for a chart named by "
                 "repository", id="version-of-a-folder"),
    pytest.param({"chart": "https://charts.example/redis", "version": "1.0.0"}, "helm.charts[0].chart: a folder, "
                 "or `oci://…`; a chart repository's URL goes in `repo:`", id="a-url-for-a-chart"),
])
def test_a_remote_chart_entry_is_validated(tmp_path: Path, entry: dict[str, object], message: str) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump({"helm": {"charts": [entry]}}))
    with pytest.raises(PolicyError) as raised:
        load([policy])
    assert str(raised.value).startswith(f"invalid policy {policy}: ")
    assert message in str(raised.value)
    assert "secret" not in str(raised.value)


def test_a_remote_chart_entry_names_its_values_relative_to_the_policy_file(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("helm:\n  charts:\n    - chart: oci://r.example/charts/redis\n      version: v1.2.3-rc.1\n"
                      "      values: [deploy/values-prod.yaml]\n      namespace: cache\n")
    deployment = load([policy]).helm.deployments[0]
    assert deployment.values == (tmp_path / "deploy" / "values-prod.yaml",)
    assert deployment.remote is not None
    assert (deployment.remote.repository, deployment.remote.name, deployment.remote.version) == (
        "oci://r.example/charts/redis", None, "v1.2.3-rc.1")
    assert deployment.context is not None and deployment.context.namespace == "cache"
    assert not deployment.chart.exists()


def test_a_charts_own_values_are_traced_where_a_deployment_does_not_list_them(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Helm merges a chart's values.yaml first whether or not the policy lists it: an image it sets is found there,
    not taken for one the chart fixes."""
    chart = write_chart(tmp_path / "deploy")
    (chart / "values-prod.yaml").write_text(PROD)
    (tmp_path / ".pinguard.yaml").write_text(
        "helm:\n  charts:\n    - chart: deploy/demo\n      values: [values-prod.yaml]\n")
    monkeypatch.chdir(tmp_path)
    policy = for_command([])
    result = scan_paths(["deploy"], ScanSettings(helm=replace(policy.helm, binary=helm)))
    assert result.errors == []
    assert sorted((found.path, found.line, found.value) for found in result.found) == [
        ("deploy/demo/values.yaml", 4, "1.25"), ("deploy/demo/values.yaml", 10, "v0.15.0")]
