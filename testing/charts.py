"""A Helm chart repository on loopback for tests: a small chart packaged by `helm package`, indexed by
`helm repo index`, served by http.server, every request recorded."""
from __future__ import annotations

import functools
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# Two images, as charts write them: a block whose `digest` replaces the tag (Bitnami's), and a tag alone.
VALUES = """\
image:
  registry: docker.io
  repository: library/nginx
  tag: "1.25"
  digest: ""
  pullPolicy: IfNotPresent
metrics:
  image:
    repository: example.com/exporter
    tag: v0.15.0
replicas: 1
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-demo
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: demo}
  template:
    metadata:
      labels: {app: demo}
    spec:
      containers:
        - name: app
          {{- $image := .Values.image }}
          {{- $pin := ternary (printf "@%s" $image.digest) (printf ":%s" $image.tag) (ne $image.digest "") }}
          image: "{{ $image.registry }}/{{ $image.repository }}{{ $pin }}"
          imagePullPolicy: {{ $image.pullPolicy }}
        - name: metrics
          image: "{{ .Values.metrics.image.repository }}:{{ .Values.metrics.image.tag }}"
"""

IMAGES = ("docker.io/library/nginx:1.25", "example.com/exporter:v0.15.0")


def write_chart(folder: Path, name: str = "demo", version: str = "1.2.3") -> Path:
    """A chart's folder with the two images above."""
    chart = folder / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"2.0.0\"\n")
    (chart / "values.yaml").write_text(VALUES)
    (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    return chart


def package(helm: str, chart: Path, into: Path) -> Path:
    """`helm package` of `chart` into the folder `into`: the archive."""
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run([helm, "package", str(chart), "--destination", str(into)], check=True, capture_output=True,
                   timeout=60)
    return next(into.glob(f"{chart.name}-*.tgz"))


@dataclass
class ChartRepository:
    url: str
    folder: Path
    requests: list[str] = field(default_factory=list)  # "GET /index.yaml", in the order served


@contextmanager
def serve_charts(helm: str, folder: Path) -> Iterator[ChartRepository]:
    """The archives in `folder` indexed and served on loopback until the block exits."""
    served: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            served.append(f"{self.command} {self.path}")

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    url = f"http://127.0.0.1:{server.server_address[1]}"
    subprocess.run([helm, "repo", "index", str(folder), "--url", url], check=True, capture_output=True, timeout=60)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield ChartRepository(url, folder, served)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
