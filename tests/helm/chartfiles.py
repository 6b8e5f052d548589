"""Helm charts written for a test: a Chart.yaml, one template and the chart's values.yaml."""
from __future__ import annotations

from pathlib import Path

BLOCK = "image:\n  repository: nginx\n  tag: '1.25'\n"
# A pod whose one image is `image.repository` and `image.tag` of the values.
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
    - name: app
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
"""


def write_chart(root: Path, template: str, values: str,
                chart: str = "apiVersion: v2\nname: app\nversion: 1.0.0\n") -> None:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text(chart)
    (root / "templates" / "deployment.yaml").write_text(template)
    (root / "values.yaml").write_text(values)
