"""Pinning a chart's values files where Helm confirms it: each image tries its placements in order."""
from __future__ import annotations

import os
from pathlib import Path

from pinguard.helm.judge import FIXED, Judge, JudgedChart, found_in
from pinguard.helm.pinning import CANNOT, plan_chart
from pinguard.helm.settings import HelmSettings

DIGEST = "sha256:" + "d" * 64
CONTAINERS = """\
apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
    - name: app
      image: {image}
    - name: sidecar
      image: busybox:1.36
"""


def _judged(root: Path, helm: str, image: str, values: str) -> JudgedChart:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    (root / "templates" / "pod.yaml").write_text(CONTAINERS.format(image=image))
    (root / "values.yaml").write_text(values)
    chart = Judge(HelmSettings(binary=helm), os.environ).chart_at(root)
    assert chart is not None and chart.failure is None
    return chart


def _plan(chart: JudgedChart) -> tuple[str | None, list[tuple[str | None, str]]]:
    wanted = [(found, DIGEST) for name in ("values.yaml", "Chart.yaml") for found in found_in(chart, chart.root / name)]
    plan = plan_chart(chart, wanted)
    return plan.texts.get((chart.root / "values.yaml").resolve()), [(f.rendered, why) for f, why in plan.refused]


def test_the_digest_goes_where_the_chart_reads_it_and_what_the_chart_writes_is_refused(
        helm: str, tmp_path: Path) -> None:
    values = 'image:\n  repository: nginx\n  tag: "1.25.3"\n  digest: ""\n'
    chart = _judged(tmp_path / "app", helm, '"{{ .Values.image.repository }}:{{ .Values.image.tag }}'
                    '{{ with .Values.image.digest }}@{{ . }}{{ end }}"', values)
    text, refused = _plan(chart)
    assert text == values.replace('digest: ""', f'digest: "{DIGEST}"')
    assert refused == [("busybox:1.36", FIXED)]


def test_where_the_chart_reads_no_digest_the_tag_carries_it(helm: str, tmp_path: Path) -> None:
    values = 'image:\n  repository: nginx\n  tag: "1.25.3"\n'
    chart = _judged(tmp_path / "app", helm, '"{{ .Values.image.repository }}:{{ .Values.image.tag }}"', values)
    assert _plan(chart)[0] == values.replace('"1.25.3"', f'"1.25.3@{DIGEST}"')


def test_an_image_no_placement_carries_is_refused_with_what_the_render_showed(helm: str, tmp_path: Path) -> None:
    values = 'image:\n  repository: nginx\n  tag: "1.25.3"\n'
    image = ('"{{ .Values.image.repository }}:{{ if semverCompare ">=1.0.0" .Values.image.tag }}'
             '{{ .Values.image.tag }}{{ end }}"')  # a tag holding a digest is no version
    text, refused = _plan(_judged(tmp_path / "app", helm, image, values))
    assert text is None
    (why,) = [why for rendered, why in refused if rendered == "nginx:1.25.3"]
    assert why.startswith(f"{CANNOT}: ") and "helm template fails once it is written" in why
