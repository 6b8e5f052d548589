"""Check and pin a repository of five Helm charts with Helm as the judge, against one `helm template` per chart and
values file.

The repository is generated in a temporary folder outside any git work tree, in the shapes of the chart fixtures
(tests/testdata/helm/charts): five charts of 1, 5, 10, 20 and 40 containers, one an umbrella chart whose subcharts
compose their images through a vendored library, two with a second values file beside `values.yaml`. Untimed, every
chart is rendered once per values file and every image that renders is locked with the test digests
(testing/lockdata.py) in the repository's `pinguard.lock`.

Timed, each command a fresh process, the median of `--repeat` runs, interleaved:

- the baseline: `helm template` once per chart and values file, one after another;
- `pinguard check --helm HELM .` on the repository as generated (every image unpinned), with an empty cache
  (`PINGUARD_CACHE_DIR`), then again on the same cache;
- `pinguard pin --helm HELM .` on a fresh copy, with an empty cache;
- `pinguard check --helm HELM .` on what pin wrote (the usual state), cold then warm.

Goals: check within 1.5x of the baseline, warm within 0.2x, pin within 3x.
Run: `.venv/bin/python benchmarks/helm.py [--helm PATH] [--repeat K] [--keep DIR]` (default Helm: .venv/helm/4/helm).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

# scan_pin puts the repository root on sys.path, so pinguard and testing import after it.
from installed import PINGUARD, compile_pinguard
from scan_pin import _outside_git

from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock
from pinguard.scan.paths import scan_paths
from pinguard.sources.base import Found
from testing.lockdata import lock_for

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "testdata" / "helm" / "charts"
DEFAULT_HELM = ROOT / ".venv" / "helm" / "4" / "helm"
CHECK_GOAL = 1.5  # check, cold cache, over the baseline renders
WARM_GOAL = 0.2  # check, warm cache, over the baseline renders
PIN_GOAL = 3.0  # pin of a fresh copy, cold cache, over the baseline renders
MIRROR = "mirror.example.com"  # the registry the umbrella chart's second values file pulls every image from

# One Deployment per component, as charts keep one template per component.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-@NAME@
  labels:
    app.kubernetes.io/name: @NAME@
    app.kubernetes.io/instance: {{ .Release.Name }}
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: @NAME@
      app.kubernetes.io/instance: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: @NAME@
        app.kubernetes.io/instance: {{ .Release.Name }}
    spec:
      containers:
        - name: @NAME@
          image: "@IMAGE@"
          ports:
            - containerPort: 8080
"""

# A component's values block and the template expression of its image, in the shapes of the fixtures.
Shape = Callable[[str, int], tuple[dict[str, Any], str]]


def app_version(key: str, n: int) -> tuple[dict[str, Any], str]:  # app-version-default
    return ({"image": {"repository": f"registry.k8s.io/example/{key}", "tag": ""}},
            f"{{{{ .Values.{key}.image.repository }}}}:{{{{ .Values.{key}.image.tag | default .Chart.AppVersion }}}}")


def digest_field(key: str, n: int) -> tuple[dict[str, Any], str]:  # tag-in-labels' image block
    return ({"image": {"registry": "docker.io", "repository": f"example/{key}", "tag": f"1.{n}.0", "digest": ""}},
            f"{{{{ with .Values.{key}.image }}}}{{{{ .registry }}}}/{{{{ .repository }}}}:{{{{ .tag }}}}"
            "{{ with .digest }}@{{ . }}{{ end }}{{ end }}")


def distroless(key: str, n: int) -> tuple[dict[str, Any], str]:  # suffix-flag
    return ({"image": {"registry": "quay.io", "repository": f"example/{key}", "tag": f"v2.{n}.1",
                       "distroless": True, "digest": ""}},
            f"{{{{ with .Values.{key}.image }}}}{{{{ .registry }}}}/{{{{ .repository }}}}:{{{{ .tag }}}}"
            "{{ if .distroless }}-distroless{{ end }}{{ with .digest }}@{{ . }}{{ end }}{{ end }}")


def name_tag(key: str, n: int) -> tuple[dict[str, Any], str]:  # name-tag
    return ({"image": {"name": f"quay.io/example/{key}", "tag": f"4.{n}.0"}},
            f"{{{{ .Values.{key}.image.name }}}}:{{{{ .Values.{key}.image.tag }}}}")


def repository_image_version(key: str, n: int) -> tuple[dict[str, Any], str]:  # repository-image-version
    block: dict[str, Any] = {"repository": "nvcr.io/example", "image": key}
    if n:  # the first block has no version: the chart's appVersion
        block["version"] = f"v{n}.3.0"
    return (block, f"{{{{ with .Values.{key} }}}}{{{{ .repository }}}}/{{{{ .image }}}}:"
                   "{{ .version | default $.Chart.AppVersion }}{{ end }}")


def library(key: str, n: int) -> tuple[dict[str, Any], str]:  # library-subchart
    return ({"image": {"registry": "docker.io", "repository": f"example/{key}", "tag": f"7.{n}.2-debian-12-r0",
                       "digest": ""}},
            f'{{{{ include "common.images.image" (dict "imageRoot" .Values.{key}.image "global" .Values.global) }}}}')


@dataclass
class Chart:
    name: str
    containers: int
    values_files: list[str]  # values.yaml first; each is rendered on its own over the defaults


def _write_chart(folder: Path, name: str, components: list[tuple[str, Shape]], *, library_chart: bool = False,
                 subcharts: tuple[str, ...] = (), extra_values: dict[str, Any] | None = None) -> None:
    (folder / "templates").mkdir(parents=True)
    dependencies = [{"name": "common", "version": "2.x.x"}] if library_chart else []
    dependencies += [{"name": sub, "version": "0.1.0"} for sub in subcharts]
    metadata: dict[str, Any] = {"apiVersion": "v2", "name": name, "description": f"Generated: {name}.",
                                "type": "application", "version": "0.1.0", "appVersion": "v1.0.0"}
    if dependencies:
        metadata["dependencies"] = dependencies
    (folder / "Chart.yaml").write_text(yaml.safe_dump(metadata, sort_keys=False), encoding="utf-8")
    values: dict[str, Any] = dict(extra_values or {})
    for n, (key, shape) in enumerate(components):
        values[key], image = shape(key, n)
        text = DEPLOYMENT.replace("@NAME@", key.lower()).replace("@IMAGE@", image)
        (folder / "templates" / f"{key}.yaml").write_text(text, encoding="utf-8")
    (folder / "values.yaml").write_text(yaml.safe_dump(values, sort_keys=False), encoding="utf-8")
    if library_chart:  # vendored, as bitnami charts carry theirs
        shutil.copytree(FIXTURES / "library-subchart" / "charts" / "common", folder / "charts" / "common")


def generate(repository: Path) -> list[Chart]:
    charts = repository / "charts"
    _write_chart(charts / "exporter", "exporter", [("exporter", app_version)])
    shutil.copytree(FIXTURES / "raycluster", charts / "ray")  # RayCluster and RayJob: 5 containers
    _write_chart(charts / "operator", "operator", [(f"operand{n}", repository_image_version) for n in range(5)]
                 + [(f"notebook{n}", name_tag) for n in range(5)])

    # An umbrella chart: its own 8 components and two subcharts of 6, each chart with the library vendored.
    platform = charts / "platform"
    for sub in ("frontend", "backend"):
        _write_chart(platform / "charts" / sub, sub, [(f"{sub}{n}", library) for n in range(6)], library_chart=True)
    _write_chart(platform, "platform", [(f"core{n}", library) for n in range(8)], library_chart=True,
                 subcharts=("frontend", "backend"), extra_values={"global": {"imageRegistry": ""}})
    (platform / "values-mirror.yaml").write_text(f"global:\n  imageRegistry: {MIRROR}\n", encoding="utf-8")

    # One values file per environment: production moves five images to another registry and tag.
    _write_chart(charts / "services", "services", [(f"svc{n}", digest_field) for n in range(30)]
                 + [(f"agent{n}", distroless) for n in range(10)])
    prod = {f"svc{n}": {"image": {"registry": "registry.prod.example.com", "tag": f"1.{n}.1"}} for n in range(5)}
    (charts / "services" / "values-prod.yaml").write_text(yaml.safe_dump(prod, sort_keys=False), encoding="utf-8")

    return [Chart("exporter", 1, ["values.yaml"]), Chart("ray", 5, ["values.yaml"]),
            Chart("operator", 10, ["values.yaml"]), Chart("platform", 20, ["values.yaml", "values-mirror.yaml"]),
            Chart("services", 40, ["values.yaml", "values-prod.yaml"])]


def render_commands(helm: str, charts: list[Chart], repository: Path) -> list[list[str]]:
    """One `helm template` per chart and values file; `values.yaml` is Helm's default and needs no flag."""
    commands = []
    for chart in charts:
        folder = repository / "charts" / chart.name
        for values in chart.values_files:
            flags = [] if values == "values.yaml" else ["--values", str(folder / values)]
            commands.append([helm, "template", "rel", str(folder), *flags])
    return commands


def render_into(commands: list[list[str]], env: dict[str, str], folder: Path, what: str) -> Path:
    """Untimed: each render's manifests in a file of `folder`; a render that fails ends the benchmark."""
    folder.mkdir()
    for n, command in enumerate(commands):
        rendered = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if rendered.returncode != 0:
            raise SystemExit(f"{what}: {' '.join(command)} exited {rendered.returncode}:\n{rendered.stderr[-2000:]}")
        (folder / f"render-{n}.yaml").write_text(rendered.stdout, encoding="utf-8")
    return folder


def found_in(folder: Path) -> list[Found]:
    scanned = scan_paths([str(folder)])
    if scanned.errors:
        raise SystemExit("scan errors in the renders:\n" + "\n".join(scanned.errors[:10]))
    return scanned.found


def mirrored(lock: Lock) -> Lock:
    """A mirror serves the same manifests as the registry it mirrors: its entries take the origin's digests.

    The test digests differ by name; left so, no one values line could pin an image for both registries.
    """
    origin = {(entry.name.split("/", 1)[1], entry.tag): entry.digest for entry in lock
              if not entry.name.startswith(MIRROR + "/")}
    return Lock().with_entries(
        replace(entry, digest=origin[entry.name.split("/", 1)[1], entry.tag]) if entry.name.startswith(MIRROR + "/")
        else entry for entry in lock)


def pinned_count(helm: str, charts: list[Chart], copy: Path, env: dict[str, str], lock: Lock, folder: Path) -> str:
    """Untimed: how many images the pinned copy renders carry a digest the lock holds for their name."""
    rendered = render_into(render_commands(helm, charts, copy), env, folder, "the pinned copy no longer renders")
    images = [item.reference for item in found_in(rendered) if item.reference]
    locked = {(entry.name, entry.digest) for entry in lock}
    pinned = sum(1 for image in images if (image.name, image.digest) in locked)
    return f"{pinned} of {len(images)} rendered images carry their locked digest"


@dataclass
class Row:
    label: str
    walls: list[float] = field(default_factory=list)
    note: str = ""
    failed: str = ""  # why the command did not do its work; its time is not reported

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)


def timed(row: Row, commands: list[list[str]], cwd: Path, env: dict[str, str]) -> bool:
    """Run `commands` one after another and add their total wall time to `row`; False (and why) on a failure.

    0 and 1 are the exits of work done (1: findings reported); anything else would be timing the wrong work.
    """
    started = time.perf_counter()
    outputs = []
    for command in commands:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env, check=False)
        if done.returncode not in (0, 1):
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            row.failed = f"exit {done.returncode}: {last}"
            return False
        outputs.append(done)
    row.walls.append(time.perf_counter() - started)
    if len(commands) == 1:
        lines = outputs[0].stdout.strip().splitlines()
        row.note = f"exit {outputs[0].returncode}, {lines[-1] if lines else 'no output'}"
    return True


def _fresh_cache(base: Path, name: str) -> dict[str, str]:
    """An empty cache for one command and the runs after it (see pinguard/registry/cache.py)."""
    return {"PINGUARD_CACHE_DIR": str(base / "caches" / name), "XDG_CACHE_HOME": str(base / "xdg" / name)}


def measure(helm: str, repeat: int, base: Path) -> int:
    source = base / "repository"
    charts = generate(source)
    # Helm's own folders in the work folder, for every command alike: no user configuration, plugins or cache.
    env = {**os.environ, **{f"HELM_{kind}_HOME": str(base / "helm" / kind.lower())
                            for kind in ("CACHE", "CONFIG", "DATA")}}
    renders = render_commands(helm, charts, source)
    # Untimed: every image that renders, locked with the test digests.
    lock = mirrored(lock_for(found_in(render_into(renders, env, base / "renders",
                                                  "a generated chart does not render"))))
    lockfile.write(source / "pinguard.lock", lock)

    baseline = Row(f"helm template x{len(renders)}", note="one render per chart and values file")
    check_cold, check_warm = Row("check, cold cache"), Row("check, warm cache")
    pin = Row("pin, fresh copy, cold cache")
    pinned_cold, pinned_warm = Row("check pinned, cold cache"), Row("check pinned, warm cache")
    check = [*PINGUARD, "check", "--helm", helm, "."]
    pinned = ""  # what the first pin's output renders
    for run in range(repeat):  # interleaved, so drift on the machine touches each alike
        timed(baseline, renders, source, env)
        cache = _fresh_cache(base, f"check-{run}")
        if timed(check_cold, [check], source, {**env, **cache}):
            timed(check_warm, [check], source, {**env, **cache})
        copy = base / f"pinned-{run}"
        shutil.copytree(source, copy)
        pin_command = [*PINGUARD, "pin", "--helm", helm, "."]
        if not timed(pin, [pin_command], copy, {**env, **_fresh_cache(base, f"pin-{run}")}):
            continue
        if run == 0:
            pinned = pinned_count(helm, charts, copy, env, lock, base / "renders-pinned")
        cache = _fresh_cache(base, f"pinned-{run}")
        if timed(pinned_cold, [check], copy, {**env, **cache}):
            timed(pinned_warm, [check], copy, {**env, **cache})

    version = subprocess.run([helm, "version", "--short"], capture_output=True, text=True, env=env,
                             check=False).stdout.strip()
    sizes = ", ".join(f"{chart.name} {chart.containers}" for chart in charts)
    print(f"{len(charts)} charts (containers: {sizes}), {len(renders)} renders (chart and values file), "
          f"{len(lock)} images locked; helm {version}")
    print(f"median wall of {repeat} runs, each command a fresh process")
    if pinned:
        pin.note += "; " + pinned
    rows = [baseline, check_cold, check_warm, pin, pinned_cold, pinned_warm]
    report(rows, baseline, [(check_cold, CHECK_GOAL), (check_warm, WARM_GOAL), (pin, PIN_GOAL),
                            (pinned_cold, CHECK_GOAL), (pinned_warm, WARM_GOAL)])
    return 1 if any(row.failed for row in rows) else 0


def report(rows: list[Row], baseline: Row, goals: list[tuple[Row, float]]) -> None:
    print(f"{'command':<28} {'wall s':>7} {'range s':>11} {'x renders':>9}")
    for row in rows:
        if row.failed or not row.walls:
            print(f"{row.label:<28} {'-':>7} {'-':>11} {'-':>9}  {row.failed or 'not run: an earlier step failed'}")
            continue
        spread = f"{min(row.walls):.2f}-{max(row.walls):.2f}"
        print(f"{row.label:<28} {row.wall:7.2f} {spread:>11} {row.wall / baseline.wall:9.2f}  {row.note}")
    print("goals:")
    for row, goal in goals:
        measured = "not measured"
        if row.walls and not row.failed:
            ratio = row.wall / baseline.wall
            measured = f"{ratio:.2f}x, {'met' if ratio <= goal else 'missed'}"
        print(f"  {row.label} within {goal:g}x of the renders: {measured}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--helm", default=str(DEFAULT_HELM), help="the helm binary (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command (default: %(default)s)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="work in DIR, a new folder, and keep it: the repository, its renders and pinned copies")
    args = parser.parse_args()
    compile_pinguard()
    helm = shutil.which(args.helm)
    if helm is None:
        raise SystemExit(f"no helm at {args.helm}: run scripts/install_helm.sh or give --helm PATH")
    if args.keep:
        args.keep.mkdir(parents=True)
        _outside_git(args.keep)
        return measure(os.path.abspath(helm), args.repeat, args.keep.resolve())
    with tempfile.TemporaryDirectory(prefix="pinguard-helm-bench-") as work:
        _outside_git(Path(work))
        return measure(os.path.abspath(helm), args.repeat, Path(work))


if __name__ == "__main__":
    sys.exit(main())
