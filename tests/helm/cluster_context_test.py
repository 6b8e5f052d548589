"""Charts whose templates ask the cluster: rendered as the policy names it, else reported, with every image no render
showed judged at its values line (real Helm 3 and 4)."""
from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.helm.binary import locate
from pinguard.helm.cluster_context import asked
from pinguard.helm.renders import Renderer
from pinguard.helm.settings import ClusterContext, Deployment
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from tests.helm.chartfiles import POD

APP = "docker.io/library/nginx:1.25.3"
GATED = "quay.io/prometheus/node-exporter:v1.8.0"

# (a template condition, what it asks, the policy's answer under which it renders the gated image)
GATES = {
    "api-versions": ('.Capabilities.APIVersions.Has "monitoring.coreos.com/v1"', "`.Capabilities.APIVersions`",
                     'api-versions: ["monitoring.coreos.com/v1"]'),
    "kube-version": ('semverCompare "<1.25-0" .Capabilities.KubeVersion.Version', "`.Capabilities.KubeVersion`",
                     'kube-version: "1.24.0"'),
    "is-upgrade": (".Release.IsUpgrade", "`.Release.IsUpgrade`", "is-upgrade: true"),
}

TEMPLATE = """\
{{- if CONDITION }}
apiVersion: v1
kind: Pod
metadata:
  name: monitor
spec:
  containers:
    - name: exporter
      image: "{{ .Values.monitor.image.repository }}:{{ .Values.monitor.image.tag }}"
{{- end }}
---
""" + POD


def _digest(image: str) -> str:
    return "sha256:" + hashlib.sha256(image.encode()).hexdigest()


def _chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, condition: str) -> Path:
    """A chart whose app image always renders and whose exporter renders only under `condition`, both pinned in
    their values and locked, in the folder the test runs in."""
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    (chart / "templates" / "pods.yaml").write_text(TEMPLATE.replace("CONDITION", condition))
    (chart / "values.yaml").write_text(
        f'image:\n  repository: nginx\n  tag: "1.25.3@{_digest(APP)}"\n'
        f'monitor:\n  image:\n    repository: quay.io/prometheus/node-exporter\n    tag: "v1.8.0@{_digest(GATED)}"\n')
    entries = [LockEntry(name=image.rpartition(":")[0], tag=image.rpartition(":")[2], digest=_digest(image),
                         media_type="application/vnd.oci.image.manifest.v1+json", size=0, tag_kind="other",
                         frozen_tag=None, resolved_at="2026-11-30T00:00:00Z", platforms={}) for image in (APP, GATED)]
    (tmp_path / "pinguard.lock").write_text(lockfile.dumps(Lock().with_entries(entries)))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PINGUARD_CACHE_DIR", str(tmp_path / "cache"))
    return chart


def _check(helm: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", "--helm", helm, "chart"], stdout=out, stderr=err)
    assert err.getvalue() == ""
    return code, out.getvalue()


def _policy(*lines: str) -> None:
    Path(".pinguard.yaml").write_text("helm:\n  charts:\n    - chart: chart\n" + "".join(f"      {line}\n"
                                                                                  for line in lines))


@pytest.mark.parametrize("gate", sorted(GATES))
def test_without_the_cluster_named_the_chart_and_its_unrendered_image_are_reported(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gate: str) -> None:
    condition, what, _ = GATES[gate]
    _chart(tmp_path, monkeypatch, condition)
    code, out = _check(helm)
    assert code == 1
    (warning,) = [line for line in out.splitlines() if line.endswith("[render-context]")]
    assert warning.startswith("chart/Chart.yaml:1:1: warning: its templates ask the cluster ")
    assert f"{what} (templates/pods.yaml:1)" in warning and f"chart: chart, {gate}: " in warning
    (error,) = [line for line in out.splitlines() if line.endswith("[not-rendered]")]
    assert error.startswith(f"chart/values.yaml:6:17: error: `{GATED}@{_digest(GATED)}` is set here and not "
                            "verified by any render: ")
    assert what in error
    assert out.count("\n") == 3  # the two above and the count: the app image rendered, locked and pinned


@pytest.mark.parametrize("gate", sorted(GATES))
def test_with_the_cluster_named_the_image_renders_and_is_judged_as_rendered(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gate: str) -> None:
    condition, _, key = GATES[gate]
    _chart(tmp_path, monkeypatch, condition)
    _policy(key)
    assert _check(helm) == (0, "")
    Path("pinguard.lock").write_text(lockfile.dumps(Lock()))
    code, out = _check(helm)  # rendered: found where its values set it, and judged there
    assert code == 1
    assert f"chart/values.yaml:7:11: error: `{GATED}@{_digest(GATED)}` (as the chart renders it) is not in" in out


def test_an_image_behind_lookup_is_judged_at_its_values_line_named_or_not(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _chart(tmp_path, monkeypatch, '(lookup "v1" "Namespace" "" "monitoring")')
    code, out = _check(helm)
    assert code == 1 and "`lookup` (templates/pods.yaml:1)" in out and "[render-context]" in out
    _policy("namespace: monitoring")
    code, out = _check(helm)  # no render answers `lookup`: the cluster named silences the chart, not its image
    assert code == 1 and "[render-context]" not in out
    (error,) = out.splitlines()[:-1]
    assert error.startswith(f"chart/values.yaml:6:17: error: `{GATED}@{_digest(GATED)}` is set here and not "
                            "verified by any render: the chart's templates call `lookup`, which no render answers")


def test_a_chart_that_asks_nothing_leaves_out_what_it_does_not_deploy(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _chart(tmp_path, monkeypatch, ".Values.monitor.enabled")  # disabled: no `enabled` in the values
    Path("chart/values.yaml").write_text(Path("chart/values.yaml").read_text().replace(
        f"@{_digest(GATED)}", ""))
    code, out = _check(helm)
    assert code == 0 and "values.yaml" not in out  # an unpinned image the chart does not deploy is no finding


def test_an_image_the_text_reading_finds_unpinned_stays_unpinned_where_no_render_shows_it(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _chart(tmp_path, monkeypatch, GATES["is-upgrade"][0])
    Path("chart/values.yaml").write_text(Path("chart/values.yaml").read_text().replace(f"@{_digest(GATED)}", ""))
    code, out = _check(helm)
    assert code == 1
    assert f"chart/values.yaml:6:17: error: `{GATED}` is set here and not verified by any render" in out
    assert "chart/values.yaml:6:17: error: `quay.io/prometheus/node-exporter` has no digest" in out  # as without Helm
    out_pin, err_pin = io.StringIO(), io.StringIO()
    assert main(["pin", "--helm", helm, "chart"], stdout=out_pin, stderr=err_pin) == 1
    assert f"{GATED} not pinned: the chart asks the cluster `.Release.IsUpgrade`" in err_pin.getvalue()


def test_renders_differ_and_are_kept_by_the_cluster_named(helm: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    chart = _chart(tmp_path, monkeypatch, GATES["api-versions"][0])
    binary = locate(helm, os.environ)
    assert binary is not None
    bare = Deployment(chart, (chart / "values.yaml",))
    named = Deployment(chart, (chart / "values.yaml",), context=ClusterContext(
        "1.30.0", ("monitoring.coreos.com/v1",), "monitoring", "exporter", True))
    for _ in range(2):  # the second time from the cache, under keys of their own
        renderer = Renderer(binary, tmp_path / "cache", os.environ)
        assert "node-exporter" not in renderer.render(bare)
        rendered = renderer.render(named)
        assert "node-exporter" in rendered
    assert len(list((tmp_path / "cache" / "helm").iterdir())) == 2


def test_what_the_templates_ask_is_found_in_actions_of_templates_only(tmp_path: Path) -> None:
    chart = tmp_path / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "charts" / "sub" / "templates").mkdir(parents=True)
    (chart / "values.yaml").write_text("note: .Capabilities.APIVersions lookup\n")  # no template
    (chart / "templates" / "a.yaml").write_text(
        "# .Release.IsUpgrade outside an action\n{{/* .Capabilities.KubeVersion in a comment */}}\n"
        "x: {{ include \"lookups\" . }}\n{{- if\n  .Capabilities.APIVersions.Has \"x/v1\" }}\n{{ end }}\n")
    (chart / "charts" / "sub" / "templates" / "_h.tpl").write_text('{{ $s := lookup "v1" "Secret" "" "x" }}\n')
    assert [(item.what, item.key, item.where) for item in asked(chart)] == [
        ("`.Capabilities.APIVersions`", "api-versions", "templates/a.yaml:4"),
        ("`lookup`", None, "charts/sub/templates/_h.tpl:1")]
