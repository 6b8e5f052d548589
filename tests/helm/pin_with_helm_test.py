"""`scan`, `lock`'s input, `check` and `pin` of charts with real Helm 3 and Helm 4 judging them.

Every fixture is pinned and rendered again with the same Helm: the chart still renders,
every image either carries the locked digest of exactly what rendered before or was
reported, and every label stays valid. The cases each fixture stands for are asserted
one by one below.
"""
from __future__ import annotations

import hashlib
import io
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from pinguard.cli import main
from pinguard.helm.settings import HelmSettings
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.reference import locked_key, parse
from pinguard.scan.paths import ScanSettings, scan_paths
from pinguard.sources.base import Found

ROOT = Path(__file__).resolve().parents[2]
CHARTS = ROOT / "tests" / "testdata" / "helm" / "charts"
LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


def _digest(reference: str) -> str:
    """A test digest per image, the same for a mirror's copy: named by repository path and tag, not registry."""
    parsed = parse(reference)
    path = parsed.name.partition("/")[2]
    return "sha256:" + hashlib.sha256(f"{path}:{parsed.tag}".encode()).hexdigest()


def _lock(found: list[Found]) -> Lock:
    entries = {}
    for item in found:
        key = locked_key(item.reference) if item.reference is not None else None
        if key is not None:
            entries[key] = LockEntry(name=key[0], tag=key[1], digest=_digest(f"{key[0]}:{key[1]}"),
                                     media_type="application/vnd.oci.image.manifest.v1+json", size=0,
                                     tag_kind="other", frozen_tag=None, resolved_at="2026-11-30T00:00:00Z",
                                     platforms={})
    return Lock().with_entries(entries.values())


def _chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    shutil.copytree(CHARTS / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PINGUARD_CACHE_DIR", str(tmp_path / "cache"))
    return Path(name)


def _found(helm: str, path: Path) -> list[Found]:
    result = scan_paths([str(path)], ScanSettings(helm=HelmSettings(binary=helm)))
    assert result.errors == []
    return result.found


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _rendered(helm: str, chart: Path, *values: str) -> list[dict[str, Any]]:
    command = [helm, "template", "release-name", str(chart)]
    for name in values:
        command += ["--values", str(chart / name)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return [document for document in yaml.safe_load_all(done.stdout) if document]


def _images(node: object) -> list[str]:
    if isinstance(node, dict):
        return [*([node["image"]] if isinstance(node.get("image"), str) else []),
                *(image for value in node.values() for image in _images(value))]
    if isinstance(node, list):
        return [image for item in node for image in _images(item)]
    return []


def _labels(node: object) -> list[str]:
    if isinstance(node, dict):
        metadata = node.get("metadata")
        own = list((metadata.get("labels") or {}).values()) if isinstance(metadata, dict) else []
        return [*own, *(label for value in node.values() for label in _labels(value))]
    if isinstance(node, list):
        return [label for item in node for label in _labels(item)]
    return []


def _pinned_and_locked(helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                       ) -> tuple[Path, list[Found], int, str]:
    chart = _chart(tmp_path, monkeypatch, name)
    found = _found(helm, chart)
    Path("pinguard.lock").write_text(lockfile.dumps(_lock(found)))
    code, _, err = _run("pin", "--helm", helm, str(chart))
    return chart, found, code, err


@pytest.mark.parametrize("name", sorted(path.name for path in CHARTS.iterdir()))
def test_after_pin_every_image_renders_pinned_to_what_rendered_before_or_is_reported(
        name: str, helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = _chart(tmp_path, monkeypatch, name)
    values = sorted(path.name for path in chart.glob("values*.yaml"))
    overlays = [[]] + [[other] for other in values if other != "values.yaml"]
    before = [_images(_rendered(helm, chart, *overlay)) for overlay in overlays]
    found = _found(helm, chart)
    Path("pinguard.lock").write_text(lockfile.dumps(_lock(found)))
    code, _, err = _run("pin", "--helm", helm, str(chart))
    assert code in (0, 1), err
    for overlay, images in zip(overlays, before, strict=True):
        documents = _rendered(helm, chart, *overlay)  # it still renders
        assert all(LABEL_VALUE.fullmatch(str(label)) for label in _labels(documents))
        for old, new in zip(images, _images(documents), strict=True):
            if new == old:
                assert f"{old} not pinned" in err  # reported, with the reason
            else:
                assert new.partition("@")[2] == _digest(old), f"{old} became {new}"
                assert new.partition("@")[0] in (old, old.rpartition(":")[0])


def test_a_tag_compared_with_semver_is_not_put_in_the_tag_form(helm: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    chart, _, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, "semver-tag")
    assert code == 1
    assert "semver-tag/values.yaml:3:9: docker.io/nginx/nginx-prometheus-exporter:1.4.2 not pinned: this chart " \
           "cannot carry a digest through its values: in the tag: helm template fails once it is written" in err
    assert "pinguard post-render" in err
    assert 'tag: "1.4.2"\n' in (chart / "values.yaml").read_text()
    code, out, _ = _run("check", "--helm", helm, str(chart))
    assert code == 1 and "semver-tag/values.yaml:3:9: error:" in out and "[unpinned]" in out


def test_a_tag_in_labels_is_pinned_through_the_digest_field(helm: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    chart, _, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, "tag-in-labels")
    assert code == 0, err
    text = (chart / "values.yaml").read_text()
    assert f'digest: "{_digest("docker.io/oliver006/redis_exporter:v1.67.0")}"' in text
    assert "tag: v1.67.0\n" in text  # the tag form would have put `@` and `:` in labels
    assert _run("check", "--helm", helm, str(chart))[0] == 0


def test_a_tag_in_a_selector_is_refused(helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = _chart(tmp_path, monkeypatch, "tag-in-selector")
    original = (chart / "values.yaml").read_bytes()
    found = _found(helm, chart)
    Path("pinguard.lock").write_text(lockfile.dumps(_lock(found)))
    code, _, err = _run("pin", "--helm", helm, str(chart))
    assert code == 1
    assert "in a selector, which `helm upgrade` cannot change" in err
    assert (chart / "values.yaml").read_bytes() == original


def test_a_suffix_flag_locks_and_pins_the_image_that_renders(helm: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    chart, found, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, "suffix-flag")
    assert code == 1
    assert {str(item.reference) for item in found} == {"quay.io/prometheus/node-exporter:v1.8.2-distroless",
                                                       "docker.io/example/gateway:v3.2.1-hardened"}
    distroless = _digest("quay.io/prometheus/node-exporter:v1.8.2-distroless")
    assert f'digest: "{distroless}"' in (chart / "values.yaml").read_text()
    assert "docker.io/example/gateway:v3.2.1-hardened not pinned" in err  # its tag form would precede the suffix
    assert "tag: v3.2.1\n" in (chart / "values.yaml").read_text()
    images = _images(_rendered(helm, chart))
    assert f"quay.io/prometheus/node-exporter:v1.8.2-distroless@{distroless}" in images


def test_a_repository_override_locks_the_repository_that_renders(helm: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    chart, found, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, "repository-override")
    assert [str(item.reference) for item in found] == ["ghcr.io/example/traefik-hub:v3.2.1"]
    assert code == 0, err
    assert _images(_rendered(helm, chart)) == [
        f"ghcr.io/example/traefik-hub:v3.2.1@{_digest('ghcr.io/example/traefik-hub:v3.2.1')}"]


def test_a_digest_under_a_dead_condition_counts_for_nothing(helm: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    chart = _chart(tmp_path, monkeypatch, "dead-condition-sha")
    values = chart / "values.yaml"
    busybox = "docker.io/library/busybox:1.37.0"
    before, _, after = values.read_text().rpartition('sha: ""')  # busybox's, the last block
    values.write_text(f'{before}sha: "{_digest(busybox)[7:]}"{after}')
    found = _found(helm, chart)
    Path("pinguard.lock").write_text(lockfile.dumps(_lock(found)))
    code, out, _ = _run("check", "--helm", helm, str(chart))
    assert code == 1
    assert f"`{busybox}` (as the chart renders it) has no digest" in out
    assert "[unread-digest]" in out
    code, _, err = _run("pin", "--helm", helm, str(chart))
    assert code == 0, err
    assert f"{busybox}@{_digest(busybox)}" in _images(_rendered(helm, chart))


def test_an_unquoted_numeric_tag_is_locked_as_helm_prints_it(helm: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    chart, found, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, "numeric-tag")
    assert [str(item.reference) for item in found] == ["quay.io/kuberay/operator:1.1"]
    assert code == 0, err
    assert f'tag: "1.1@{_digest("quay.io/kuberay/operator:1.1")}"' in (chart / "values.yaml").read_text()


@pytest.mark.parametrize("name, expected", [
    ("name-tag", {"quay.io/jupyterhub/k8s-hub:4.1.0", "quay.io/jupyterhub/k8s-singleuser-sample:4.1.0",
                  "registry.k8s.io/pause:3.10"}),
    ("repository-image-version", {"nvcr.io/nvidia/driver:570.124.06", "nvcr.io/nvidia/gpu-operator:v25.3.0",
                                  "nvcr.io/nvidia/k8s/container-toolkit:v1.17.5-ubuntu20.04",
                                  "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.0"}),
    ("registry-namespace", {"quay.io/jetstack/cert-manager-controller:v1.17.1",
                            "quay.io/jetstack/cert-manager-webhook:v1.17.1",
                            "quay.io/jetstack/cert-manager-cainjector:v1.17.1"}),
    ("app-version-default", {"registry.k8s.io/external-dns/external-dns:v0.15.1"}),
    ("raycluster", {"docker.io/rayproject/ray:2.41.0", "docker.io/rayproject/ray:2.41.0-gpu",
                    "docker.io/rayproject/ray:2.41.0-py311", "docker.io/rayproject/ray:2.41.0-py311-cpu"}),
])
def test_shapes_a_text_reading_misses_are_found_and_pinned(name: str, expected: set[str], helm: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    chart, found, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, name)
    assert {str(item.reference) for item in found} >= expected
    assert code == 0, err
    for image in _images(_rendered(helm, chart)):
        assert image.partition("@")[2] in {_digest(reference) for reference in expected}


def test_an_image_the_chart_fixes_is_locked_and_reported_at_the_chart(helm: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    chart, found, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, "fixed-image")
    fixed = [item for item in found if item.fixed is not None]
    assert [(item.path, item.line, str(item.reference)) for item in fixed] == [
        ("fixed-image/Chart.yaml", 1, "docker.io/library/busybox:1.36")]
    assert code == 1 and "fixed-image/Chart.yaml:1:1: busybox:1.36 not pinned: no values line sets it" in err
    code, out, _ = _run("check", "--helm", helm, str(chart))
    assert code == 1 and "pin it at deploy time with `pinguard post-render`" in out


def test_each_values_file_pins_what_it_controls(helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart, _, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, "multi-values")
    assert code == 0, err
    prod = _digest("registry.prod.example.com/example/api:1.8.1")
    assert f'tag: "1.8.1@{prod}"' in (chart / "values-prod.yaml").read_text()
    assert f"registry.prod.example.com/example/api:1.8.1@{prod}" in _images(
        _rendered(helm, chart, "values-prod.yaml"))
    assert _run("pin", "--helm", helm, str(chart))[0] == 0  # a second pin changes nothing


def test_a_chart_helm_cannot_render_is_read_as_text_and_never_pinned(helm: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    chart = _chart(tmp_path, monkeypatch, "name-tag")
    (chart / "templates" / "broken.yaml").write_text("{{ .Values.missing.field }}\n")
    original = (chart / "values.yaml").read_bytes()
    Path("pinguard.lock").write_text(lockfile.dumps(_lock(scan_paths([str(chart)]).found)))
    code, out, _ = _run("check", "--helm", helm, str(chart))
    assert "helm template failed" in out
    code, _, err = _run("pin", "--helm", helm, str(chart))
    assert code == 1 and "helm template failed" in err
    assert (chart / "values.yaml").read_bytes() == original


def test_a_helm_named_that_does_not_run_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = _chart(tmp_path, monkeypatch, "name-tag")
    code, _, err = _run("check", "--helm", str(tmp_path / "no-helm"), str(chart))
    assert code == 2 and "is not an executable file" in err


def test_a_subchart_image_is_pinned_in_the_subchart_values_unless_the_parent_sets_it(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PINGUARD_CACHE_DIR", str(tmp_path / "cache"))
    deployment = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: {{ .Chart.Name }}}\nspec:\n  template:\n"
                  "    spec:\n      containers:\n        - name: app\n"
                  '          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"\n')
    for folder, name in ((Path("umbrella"), "umbrella"), (Path("umbrella/charts/web"), "web"),
                         (Path("umbrella/charts/db"), "db")):
        (folder / "templates").mkdir(parents=True)
        (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n")
        (folder / "templates" / "deployment.yaml").write_text(deployment)
    Path("umbrella/values.yaml").write_text("image: {repository: example/api, tag: '1.0'}\ndb:\n  image:\n"
                                            "    tag: '16.4'\n")
    Path("umbrella/charts/web/values.yaml").write_text("image:\n  repository: example/web\n  tag: '2.0'\n")
    Path("umbrella/charts/db/values.yaml").write_text("image:\n  repository: example/postgres\n  tag: '15.0'\n")
    found = _found(helm, Path("umbrella"))
    assert sorted((item.path, item.line, str(item.reference)) for item in found) == [
        ("umbrella/charts/web/values.yaml", 3, "docker.io/example/web:2.0"),
        ("umbrella/values.yaml", 1, "docker.io/example/api:1.0"),
        ("umbrella/values.yaml", 4, "docker.io/example/postgres:16.4"),  # the parent's tag wins
    ]
    Path("pinguard.lock").write_text(lockfile.dumps(_lock(found)))
    code, _, err = _run("pin", "--helm", helm, "umbrella")
    assert code == 0, err
    assert f"tag: '2.0@{_digest('example/web:2.0')}'" in Path("umbrella/charts/web/values.yaml").read_text()
    assert Path("umbrella/charts/db/values.yaml").read_text().endswith("tag: '15.0'\n")
    assert sorted(_images(_rendered(helm, Path("umbrella")))) == sorted(
        f"{name}@{_digest(name)}" for name in ("example/api:1.0", "example/postgres:16.4", "example/web:2.0"))


def test_what_helm_makes_afresh_in_every_render_is_no_change_and_every_place_of_an_image_is_pinned(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart, _, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, "generated-secrets")
    assert code == 0, err
    images = _images(_rendered(helm, chart))
    assert len(images) == 4 and all(image.partition("@")[2] == _digest(image.partition("@")[0]) for image in images)
    text = (chart / "values.yaml").read_text()
    backup = text[text.index("backup:"):]
    assert 'digest: ""' in backup  # the disabled block renders nothing: nothing confirms a pin there
    assert text.count(f'digest: "{_digest("docker.io/bitnami/os-shell:12-debian-12-r30")}"') == 2
    assert _run("pin", "--helm", helm, str(chart))[0] == 0
    assert (chart / "values.yaml").read_text() == text  # a second pin changes nothing
    assert _run("check", "--helm", helm, str(chart))[0] == 0


def test_a_label_that_varies_between_renders_confirms_no_pin(helm: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    chart = _chart(tmp_path, monkeypatch, "random-label")
    original = (chart / "values.yaml").read_text()
    _, _, code, err = _pinned_and_locked(helm, tmp_path / "again", monkeypatch, "random-label")
    assert code == 1
    assert "spec.template.metadata.labels.rollout: varies between two renders of the unchanged chart" in err
    assert (tmp_path / "again" / "random-label" / "values.yaml").read_text() == original


def test_a_tag_shared_with_an_annotation_naming_another_image_is_not_pinned_through(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart, _, code, err = _pinned_and_locked(helm, tmp_path, monkeypatch, "annotation-image")
    assert code == 1
    assert "docker.io/acme/app:1.4.0 not pinned" in err and "it names docker.io/acme/hook:1.4.0@" in err
    (document,) = _rendered(helm, chart)
    assert document["spec"]["template"]["metadata"]["annotations"] == {
        "sidecar.istio.io/proxyImage": "docker.io/acme/hook:1.4.0"}
