"""Without Helm, nothing is written into a chart's values: `pin` and `update` refuse whole, `check` says why.

A chart's values are a values file with a Chart.yaml above it, or one the policy's
`helm.charts` deploys wherever it lies. Read without Helm they are scanned, locked and
checked, never written: only a render can tell what a pin there does. A values file of
no chart is pinned as it always was. Helm is kept off PATH (`no_helm`); the tests that pin
with Helm name it (`--helm`) or put it on PATH.
"""
from __future__ import annotations

import io
import os
from dataclasses import replace
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Copy, Lock
from pinguard.pin.plan import NEEDS_HELM
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for, locked_test_digest
from testing.seed import repush_moving, seed_dlc
from tests.conftest import UNPACED, SeededRegistry

NGINX = locked_test_digest("docker.io/library/nginx", "1.25")
BUSYBOX = locked_test_digest("docker.io/library/busybox", "1.36")
REDIS = locked_test_digest("docker.io/library/redis", "7.2")
REFUSED = f"pinguard: nothing written: {NEEDS_HELM}"

TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      containers:
        - name: web
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
        - name: sidecar
          image: "{{ .Values.sidecar.image.repository }}:{{ .Values.sidecar.image.tag }}"
"""
# nginx needs a pin; busybox is pinned to its locked digest already, and needs nothing.
VALUES = f"""\
image:
  repository: nginx
  tag: "1.25"
sidecar:
  image:
    repository: busybox
    tag: "1.36@{BUSYBOX}"
"""
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: cache}\nspec:\n  containers:\n    - name: redis\n"
       "      image: redis:7.2\n")


def _chart(root: Path, values: str | None = VALUES) -> None:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    (root / "templates" / "deployment.yaml").write_text(TEMPLATE)
    if values is not None:
        (root / "values.yaml").write_text(values)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A chart beside a Kubernetes manifest, every image locked."""
    work = tmp_path / "repo"
    _chart(work / "chart")
    (work / "job.yaml").write_text(POD)
    monkeypatch.chdir(work)
    _lock()
    return work


def _lock() -> None:
    lockfile.write(Path("pinguard.lock"), lock_for(scan_paths(["."]).found))


@pytest.fixture
def env(tmp_path: Path, no_helm: str) -> dict[str, str]:
    """What `main` is handed: PATH without helm, as the process has it (where the scan looks)."""
    return {"PATH": no_helm, "HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache")}


def _run(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), env=env, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root`, byte for byte (the lockfile included)."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("args", [(), ("--dry-run",), ("chart/values.yaml", "job.yaml")])
def test_pin_without_helm_writes_nothing_at_all(repo: Path, env: dict[str, str], args: tuple[str, ...]) -> None:
    before = _snapshot(repo)
    status, out, err = _run(env, "pin", *args)
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        "pinguard: chart/values.yaml:2:15: docker.io/library/nginx:1.25 is a chart's value: only Helm's render "
        "tells what writing it does", REFUSED]
    assert _snapshot(repo) == before  # job.yaml, outside the chart, waits for the rerun too


def test_pin_resolve_refuses_before_it_writes_the_lockfile(repo: Path, env: dict[str, str]) -> None:
    Path("pinguard.lock").unlink()
    before = _snapshot(repo)
    status, _, err = _run(env, "pin", "--resolve")
    assert (status, err.splitlines()[-1]) == (2, REFUSED)  # no registry reached: the refusal comes first
    assert _snapshot(repo) == before


def test_values_the_policy_deploys_outside_the_chart_are_the_charts(tmp_path: Path, env: dict[str, str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "repo"
    _chart(work / "charts" / "app", values=None)
    (work / "deploy").mkdir()
    (work / "deploy" / "prod.yaml").write_text(VALUES)  # no `values` in its name, no Chart.yaml above it
    (work / "job.yaml").write_text(POD)
    (work / ".pinguard.yaml").write_text("helm:\n  charts:\n    - chart: charts/app\n"
                                         "      values: [../../deploy/prod.yaml]\n")
    monkeypatch.chdir(work)
    _lock()
    before = _snapshot(work)
    status, _, err = _run(env, "pin")
    assert (status, err.splitlines()) == (2, [
        "pinguard: deploy/prod.yaml:2:15: docker.io/library/nginx:1.25 is a chart's value: only Helm's render "
        "tells what writing it does", REFUSED])
    assert _snapshot(work) == before
    status, out, _ = _run(env, "check")
    assert status == 1
    assert [line for line in out.splitlines() if "[needs-helm]" in line] == [
        f"deploy/prod.yaml:2:15: error: `nginx` is not pinned to its locked digest, and {NEEDS_HELM} (only a "
        "render tells what a write into a chart does); or pin it at deploy time with `pinguard post-render` "
        "[needs-helm]"]


def test_check_reports_each_image_a_pin_would_write_at_its_values_line(repo: Path, env: dict[str, str]) -> None:
    status, out, _ = _run(env, "check")
    assert status == 1
    needs_helm = [line.partition(": error: ")[0] for line in out.splitlines() if line.endswith("[needs-helm]")]
    assert needs_helm == ["chart/values.yaml:2:15"]  # nginx; busybox, pinned to its locked digest, needs nothing
    # With busybox moved in the lock it needs a write too; nginx, dropped from the lock, still does (once locked).
    moved = lock_for(scan_paths(["."]).found)
    entry = moved.get("docker.io/library/busybox", "1.36")
    assert entry is not None
    kept = [e for e in moved if e.name != "docker.io/library/nginx"]
    lockfile.write(Path("pinguard.lock"), Lock().with_entries([*kept, replace(entry, digest="sha256:" + "1" * 64)]))
    status, out, _ = _run(env, "check")
    needs_helm = [line.partition(": error: ")[0] for line in out.splitlines() if line.endswith("[needs-helm]")]
    assert needs_helm == ["chart/values.yaml:2:15", "chart/values.yaml:6:17"]


def test_a_pinned_chart_needs_no_helm(repo: Path, env: dict[str, str]) -> None:
    """Only images that need a write count: with every chart image at its locked digest, `pin` pins the rest."""
    values = Path("chart/values.yaml")
    values.write_text(VALUES.replace('"1.25"', f'"1.25@{NGINX}"'))
    chart_before = values.read_bytes()
    status, out, err = _run(env, "pin")
    assert (status, out, err) == (0, "pinned 1 file\n", "")
    assert values.read_bytes() == chart_before
    assert Path("job.yaml").read_text() == POD.replace("redis:7.2", f"redis:7.2@{REDIS}")


def test_a_values_file_of_no_chart_pins_as_before(tmp_path: Path, env: dict[str, str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("values.yaml").write_text(VALUES)
    Path("job.yaml").write_text(POD)
    _lock()
    assert _run(env, "pin") == (0, "pinned 2 files\n", "")
    assert Path("values.yaml").read_text() == VALUES.replace('"1.25"', f'"1.25@{NGINX}"')  # the tag form
    assert "[needs-helm]" not in _run(env, "check")[1]


@pytest.mark.parametrize("found_by", ["--helm", "PATH"])
def test_with_helm_the_same_repo_pins(repo: Path, env: dict[str, str], helm: str, found_by: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    flags = ["--helm", helm] if found_by == "--helm" else []
    if found_by == "PATH":
        env["PATH"] = os.pathsep.join((os.path.dirname(helm), env["PATH"]))
        monkeypatch.setenv("PATH", env["PATH"])
    status, out, err = _run(env, "pin", *flags)
    assert (status, out, err) == (0, "pinned 2 files\n", "")
    assert Path("chart/values.yaml").read_text() == VALUES.replace('"1.25"', f'"1.25@{NGINX}"')
    assert Path("job.yaml").read_text() == POD.replace("redis:7.2", f"redis:7.2@{REDIS}")
    assert _run(env, "check", *flags)[0] == 0


MIRROR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"


def test_pin_to_renames_nothing_in_a_chart_without_helm(repo: Path, env: dict[str, str]) -> None:
    # Every image pinned and copied: `--to` would rename the scalar `image:` of a chart's values.
    Path("chart/values.yaml").write_text(f"image: nginx:1.25@{NGINX}\n")
    Path("job.yaml").write_text(POD.replace("redis:7.2", f"redis:7.2@{REDIS}"))
    lock = lock_for(scan_paths(["."]).found)
    lockfile.write(Path("pinguard.lock"), Lock().with_entries(
        replace(entry, copies=(Copy(f"{MIRROR}/{entry.name}", "2026-12-01T00:00:00Z"),))  # the registry kept
        for entry in lock))
    before = _snapshot(repo)
    status, _, err = _run(env, "pin", "--to", MIRROR)
    assert (status, err.splitlines()) == (2, [
        f"pinguard: chart/values.yaml:1:8: docker.io/library/nginx:1.25@{NGINX} is a chart's value: only Helm's "
        "render tells what writing it does", REFUSED])
    assert _snapshot(repo) == before


MOVING = "train-ml-cuda-v1.1"


@pytest.mark.registry
def test_update_refuses_alike(token_registry: SeededRegistry, tmp_path: Path, env: dict[str, str],
                              monkeypatch: pytest.MonkeyPatch, helm: str) -> None:
    repository = f"deep-learning-containers/needs-helm-{Path(helm).parent.name}"
    seed_dlc(token_registry.registry.pusher(), repository)
    work = tmp_path / "repo"
    _chart(work / "chart", values=f"image:\n  repository: public.ecr.aws/{repository}\n  tag: {MOVING}\n"
                                   f"sidecar:\n  image:\n    repository: public.ecr.aws/{repository}\n"
                                   f"    tag: {MOVING}\n")
    monkeypatch.chdir(work)
    registry = token_registry.registry
    online = ["--mirror", f"public.ecr.aws={registry.url}", "--ca-file", str(registry.ca_file), *UNPACED]
    assert _run(env, "pin", "--resolve", "--helm", helm, *online)[0] == 0  # pinned where Helm confirms it
    repush_moving(registry.pusher(), repository)
    before = _snapshot(work)
    for args in (["update"], ["update", "--dry-run"]):
        status, _, err = _run(env, *args, *online)
        assert (status, err.splitlines()[-1]) == (2, REFUSED)
        assert _snapshot(work) == before
    status, out, err = _run(env, "update", "--helm", helm, *online)
    assert (status, err) == (0, "")
    assert out.endswith("updated 1 tag in pinguard.lock, re-pinned 1 file\n")
    moved = lockfile.read(Path("pinguard.lock")).get(f"public.ecr.aws/{repository}", MOVING)
    assert moved is not None and Path("chart/values.yaml").read_text().count(moved.digest) == 2
