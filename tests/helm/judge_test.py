"""Charts judged by their renders: each image at the values line that controls it, or at Chart.yaml when none does."""
from __future__ import annotations

import os
from pathlib import Path

from pinguard.helm.judge import FIXED, Judge, failure_notice, found_in
from pinguard.helm.settings import HelmSettings

TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      containers:
        - name: app
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
        - name: sidecar
          image: busybox:1.36
"""


def _chart(root: Path, template: str = TEMPLATE) -> Path:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    (root / "templates" / "deployment.yaml").write_text(template)
    (root / "values.yaml").write_text('image:\n  repository: nginx\n  tag: "1.25.3"\n')
    (root / "values-prod.yaml").write_text('image:\n  tag: "1.26.0"\n')
    return root


def test_each_image_is_found_where_the_values_deployed_set_it(helm: str, tmp_path: Path) -> None:
    root = _chart(tmp_path / "app")
    chart = Judge(HelmSettings(binary=helm), os.environ).chart_at(root)
    assert chart is not None and chart.failure is None
    assert [deployment.values for deployment in chart.deployments] == [
        (root / "values.yaml",), (root / "values.yaml", root / "values-prod.yaml")]
    for name, line, tag in (("values.yaml", 3, "1.25.3"), ("values-prod.yaml", 2, "1.26.0")):
        (found,) = found_in(chart, root / name)  # at the tag: what each deployment renders differs by it
        assert (found.path, found.line, found.value, found.rendered) == (str(root / name), line, tag, f"nginx:{tag}")
        assert str(found.reference) == f"docker.io/library/nginx:{tag}" and found.fixed is None
    (fixed,) = found_in(chart, root / "Chart.yaml")
    assert (fixed.rendered, fixed.fixed, fixed.line) == ("busybox:1.36", FIXED, 1)
    assert all(chart.judges(root / name) for name in ("values.yaml", "Chart.yaml", "templates/deployment.yaml"))
    assert found_in(chart, root / "templates" / "deployment.yaml") == []  # judged in the render, not read


def test_a_chart_helm_refuses_is_read_as_text_with_that_said(helm: str, tmp_path: Path) -> None:
    root = _chart(tmp_path / "app", TEMPLATE + "{{ fail \"no\" }}\n")
    chart = Judge(HelmSettings(binary=helm), os.environ).chart_at(root)
    assert chart is not None and chart.failure is not None and "helm template failed" in chart.failure
    assert not chart.judges(root / "values.yaml") and chart.uses == {}
    (notice,) = failure_notice(chart, root / "values.yaml")
    assert notice.reference is None and notice.problem == chart.failure
    assert failure_notice(chart, root / "Chart.yaml") == []  # only the values files deployed say so


def test_without_helm_no_chart_is_judged(tmp_path: Path) -> None:
    root = _chart(tmp_path / "app")
    assert Judge(HelmSettings(), {"PATH": str(tmp_path)}).chart_at(root) is None
