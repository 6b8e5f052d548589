"""The chart fixtures under tests/testdata/helm/charts render, with real Helm 3 and Helm 4, what they stand for.

Every rendered container image is asserted exactly, per object and container, so a fixture cannot drift from the
case it was written for; the properties each case rests on (a render that fails, labels and a selector that carry
the tag, a digest read under a dead condition) are asserted beside it.
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHARTS = ROOT / "tests" / "testdata" / "helm" / "charts"

DIGEST = "sha256:" + "0123456789abcdef" * 4
HEX = DIGEST.removeprefix("sha256:")
POD_SPEC_LISTS = ("initContainers", "containers", "ephemeralContainers")
# A label value: at most 63 characters, alphanumerics at both ends, '-', '_' and '.' between.
LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


def _render(helm: str, tmp_path: Path, chart: str, *flags: str) -> subprocess.CompletedProcess[str]:
    # Helm's own folders in the test's tmp_path: nothing read from or written to the user's.
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **{
        f"HELM_{kind}_HOME": str(tmp_path / kind.lower()) for kind in ("CACHE", "CONFIG", "DATA")}}
    return subprocess.run([helm, "template", "rel", str(CHARTS / chart), *flags], capture_output=True, text=True,
                          env=env, timeout=60, check=False)


def _documents(helm: str, tmp_path: Path, chart: str, *flags: str) -> list[dict[str, Any]]:
    rendered = _render(helm, tmp_path, chart, *flags)
    assert rendered.returncode == 0, rendered.stderr
    return [document for document in yaml.safe_load_all(rendered.stdout) if document]


def _pod_containers(node: object) -> Iterator[dict[str, Any]]:
    """Every container of every pod spec under `node`, wherever a resource nests it (RayJob's included)."""
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            for key in POD_SPEC_LISTS:
                yield from node.get(key) or []
        for value in node.values():
            yield from _pod_containers(value)
    elif isinstance(node, list):
        for item in node:
            yield from _pod_containers(item)


def _images(documents: list[dict[str, Any]]) -> dict[str, str]:
    """`Kind/name container` to the image it runs."""
    images: dict[str, str] = {}
    for document in documents:
        for container in _pod_containers(document):
            name = re.sub(r"-migrate-[a-z0-9]{5}$", "-migrate-*", document["metadata"]["name"])  # a random name
            where = f"{document['kind']}/{name} {container['name']}"
            assert where not in images, f"two containers at {where}"
            images[where] = container["image"]
    return images


def _labels(documents: list[dict[str, Any]], kind: str) -> dict[str, str]:
    [document] = [document for document in documents if document["kind"] == kind]
    labels: dict[str, str] = document["metadata"]["labels"]
    return labels


@dataclass(frozen=True)
class Render:
    chart: str
    flags: tuple[str, ...]
    images: dict[str, str]
    why: str  # what this render shows about the fixture


RENDERS = {
    "semver-tag": Render("semver-tag", (), {
        "Deployment/rel-semver-tag exporter": "docker.io/nginx/nginx-prometheus-exporter:1.4.2",
        "Deployment/rel-semver-tag reloader": "ghcr.io/example/config-reloader:0.14.0",
    }, "defaults"),
    "tag-in-labels": Render("tag-in-labels", (), {
        "Deployment/rel-tag-in-labels redis-exporter": "docker.io/oliver006/redis_exporter:v1.67.0",
    }, "defaults"),
    "tag-in-labels-digest": Render("tag-in-labels", ("--set", f"image.digest={DIGEST}"), {
        "Deployment/rel-tag-in-labels redis-exporter": f"docker.io/oliver006/redis_exporter:v1.67.0@{DIGEST}",
    }, "the digest field is appended to the tag"),
    "tag-in-selector": Render("tag-in-selector", (), {
        "Deployment/rel-tag-in-selector nginx": "docker.io/library/nginx:1.27.3",
    }, "defaults"),
    "suffix-flag": Render("suffix-flag", (), {
        "DaemonSet/rel-suffix-flag-exporter node-exporter": "quay.io/prometheus/node-exporter:v1.8.2-distroless",
        "Deployment/rel-suffix-flag-gateway gateway": "docker.io/example/gateway:v3.2.1-hardened",
    }, "defaults: both flags on"),
    "suffix-flag-digest": Render("suffix-flag", ("--set", f"image.digest={DIGEST}"), {
        "DaemonSet/rel-suffix-flag-exporter node-exporter":
            f"quay.io/prometheus/node-exporter:v1.8.2-distroless@{DIGEST}",
        "Deployment/rel-suffix-flag-gateway gateway": "docker.io/example/gateway:v3.2.1-hardened",
    }, "the digest follows the suffix"),
    "suffix-flag-off": Render("suffix-flag", ("--set", "image.distroless=false,hub.hardened=false"), {
        "DaemonSet/rel-suffix-flag-exporter node-exporter": "quay.io/prometheus/node-exporter:v1.8.2",
        "Deployment/rel-suffix-flag-gateway gateway": "docker.io/example/gateway:v3.2.1",
    }, "the flags alone add the suffixes"),
    "repository-override": Render("repository-override", (), {
        "Deployment/rel-repository-override traefik": "ghcr.io/example/traefik-hub:v3.2.1",
    }, "defaults: oci_meta on"),
    "repository-override-off": Render("repository-override", ("--set", "oci_meta.enabled=false"), {
        "Deployment/rel-repository-override traefik": "docker.io/library/traefik:v3.2.1",
    }, "image.registry and image.repository count only without oci_meta"),
    "dead-condition-sha": Render("dead-condition-sha", ("--set", f"upgradeJob.image.busybox.sha={HEX}"), {
        "Deployment/rel-dead-condition-sha-operator operator":
            "quay.io/prometheus-operator/prometheus-operator:v0.79.2",
        "Job/rel-dead-condition-sha-upgrade upgrade": "docker.io/library/busybox:1.37.0",
    }, "a sha written under the defaults never renders"),
    "dead-condition-sha-forced": Render("dead-condition-sha", (
        "--set", f"upgradeJob.image.busybox.sha={HEX},upgradeJob.forceSha=true,operator.image.sha={HEX}"), {
        "Deployment/rel-dead-condition-sha-operator operator":
            f"quay.io/prometheus-operator/prometheus-operator:v0.79.2@{DIGEST}",
        "Job/rel-dead-condition-sha-upgrade upgrade": f"docker.io/library/busybox:1.37.0@{DIGEST}",
    }, "forceSha is the only gate; the operator's sha is read unconditionally"),
    "numeric-tag": Render("numeric-tag", (), {
        "Deployment/rel-numeric-tag kuberay-operator": "quay.io/kuberay/operator:1.1",
    }, "tag: 1.10 renders as 1.1"),
    "name-tag": Render("name-tag", (), {
        "Deployment/rel-name-tag-hub hub": "quay.io/jupyterhub/k8s-hub:4.1.0",
        "DaemonSet/rel-name-tag-image-puller image-pull-singleuser": "quay.io/jupyterhub/k8s-singleuser-sample:4.1.0",
        "DaemonSet/rel-name-tag-image-puller pause": "registry.k8s.io/pause:3.10",
    }, "defaults"),
    "repository-image-version": Render("repository-image-version", (), {
        "Deployment/rel-repository-image-version gpu-operator": "nvcr.io/nvidia/gpu-operator:v25.3.0",
        "DaemonSet/rel-repository-image-version-driver driver-validation":
            "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.0",
        "DaemonSet/rel-repository-image-version-driver nvidia-driver": "nvcr.io/nvidia/driver:570.124.06",
        "DaemonSet/rel-repository-image-version-driver nvidia-container-toolkit":
            "nvcr.io/nvidia/k8s/container-toolkit:v1.17.5-ubuntu20.04",
    }, "defaults: the operator's version is the chart's appVersion"),
    "registry-namespace": Render("registry-namespace", (), {
        "Deployment/rel-registry-namespace-controller cert-manager-controller":
            "quay.io/jetstack/cert-manager-controller:v1.17.1",
        "Deployment/rel-registry-namespace-webhook cert-manager-webhook":
            "quay.io/jetstack/cert-manager-webhook:v1.17.1",
        "Deployment/rel-registry-namespace-cainjector cert-manager-cainjector":
            "quay.io/jetstack/cert-manager-cainjector:v1.17.1",
    }, "defaults: the controller's tag is the chart's appVersion"),
    "registry-namespace-digest": Render("registry-namespace", (
        "--set", f"image.digest={DIGEST},imageRegistry=registry.example.com,imageNamespace=mirror/jetstack"), {
        "Deployment/rel-registry-namespace-controller cert-manager-controller":
            f"registry.example.com/mirror/jetstack/cert-manager-controller@{DIGEST}",
        "Deployment/rel-registry-namespace-webhook cert-manager-webhook":
            "registry.example.com/mirror/jetstack/cert-manager-webhook:v1.17.1",
        "Deployment/rel-registry-namespace-cainjector cert-manager-cainjector":
            "registry.example.com/mirror/jetstack/cert-manager-cainjector:v1.17.1",
    }, "the digest replaces the tag; imageRegistry and imageNamespace prefix every name"),
    "app-version-default": Render("app-version-default", (), {
        "Deployment/rel-app-version-default external-dns": "registry.k8s.io/external-dns/external-dns:v0.15.1",
    }, "defaults: the tag is the chart's appVersion"),
    "fixed-image": Render("fixed-image", ("--set", "image.tag=2.4.0"), {
        "Deployment/rel-fixed-image volume-permissions": "busybox:1.36",
        "Deployment/rel-fixed-image webapp": "ghcr.io/example/webapp:2.4.0",
    }, "the init container's image does not follow any value"),
    "library-subchart": Render("library-subchart", (), {
        "Deployment/rel-library-subchart redis": "docker.io/example/redis:7.4.2-debian-12-r0",
        "Deployment/rel-library-subchart metrics": "docker.io/example/redis-exporter:1.67.0-debian-12-r0",
    }, "defaults"),
    "library-subchart-mirror": Render("library-subchart", (
        "--values", str(CHARTS / "library-subchart" / "values-mirror.yaml"),
        "--set", f"metrics.image.digest={DIGEST}"), {
        "Deployment/rel-library-subchart redis": "mirror.example.com/example/redis:7.4.2-debian-12-r0",
        "Deployment/rel-library-subchart metrics": f"mirror.example.com/example/redis-exporter@{DIGEST}",
    }, "global.imageRegistry replaces every registry; the library puts the digest in place of the tag"),
    "raycluster": Render("raycluster", (), {
        "RayCluster/rel-raycluster ray-head": "docker.io/rayproject/ray:2.41.0",
        "RayCluster/rel-raycluster ray-worker": "docker.io/rayproject/ray:2.41.0-gpu",
        "RayJob/rel-raycluster-job ray-head": "docker.io/rayproject/ray:2.41.0-py311",
        "RayJob/rel-raycluster-job ray-worker": "docker.io/rayproject/ray:2.41.0-py311",
        "RayJob/rel-raycluster-job ray-job-submitter": "docker.io/rayproject/ray:2.41.0-py311-cpu",
    }, "defaults: the worker takes the head's repository"),
    "multi-values": Render("multi-values", (), {
        "Deployment/rel-multi-values-api api": "docker.io/example/api:1.8.0",
        "Deployment/rel-multi-values-worker worker": "docker.io/example/worker:1.8.0",
    }, "values.yaml alone"),
    "multi-values-prod": Render("multi-values", ("--values", str(CHARTS / "multi-values" / "values-prod.yaml")), {
        "Deployment/rel-multi-values-api api": "registry.prod.example.com/example/api:1.8.1",
        "Deployment/rel-multi-values-worker worker": "docker.io/example/worker:1.8.0",
    }, "values-prod.yaml over values.yaml"),
    "generated-secrets": Render("generated-secrets", (), {
        "StatefulSet/rel-redis volume-permissions": "docker.io/bitnami/os-shell:12-debian-12-r30",
        "StatefulSet/rel-redis sysctl": "docker.io/bitnami/os-shell:12-debian-12-r30",
        "StatefulSet/rel-redis redis": "docker.io/bitnami/redis:7.4.1-debian-12-r0",
        "Job/rel-migrate-* migrate": "docker.io/bitnami/redis:7.4.1-debian-12-r0",
    }, "defaults: one image from two blocks; the backup block is disabled"),
    "random-label": Render("random-label", (), {
        "Deployment/rel-random-label nginx": "docker.io/library/nginx:1.27.3",
    }, "defaults"),
    "annotation-image": Render("annotation-image", (), {
        "Deployment/rel-annotation-image app": "docker.io/acme/app:1.4.0",
    }, "defaults: the hook is named only in an annotation"),
}


def test_every_chart_is_rendered_here_and_describes_what_it_stands_for() -> None:
    charts = sorted(path.name for path in CHARTS.iterdir())
    assert sorted({render.chart for render in RENDERS.values()}) == charts
    for chart in charts:
        metadata = yaml.safe_load((CHARTS / chart / "Chart.yaml").read_text(encoding="utf-8"))
        assert metadata["apiVersion"] == "v2" and metadata["name"] == chart
        assert len(metadata["description"]) > 40, chart
        assert (CHARTS / chart / "values.yaml").is_file()


@pytest.mark.parametrize("case", sorted(RENDERS))
def test_the_chart_renders_exactly_these_images(case: str, helm: str, tmp_path: Path) -> None:
    render = RENDERS[case]
    assert _images(_documents(helm, tmp_path, render.chart, *render.flags)) == render.images, render.why


def test_semver_tag_fails_to_render_with_the_tag_at_digest_form(helm: str, tmp_path: Path) -> None:
    failed = _render(helm, tmp_path, "semver-tag", "--set", f"image.tag=1.4.2@{DIGEST}")
    assert failed.returncode != 0 and failed.stdout == ""
    assert "semverCompare" in failed.stderr and "semantic version" in failed.stderr.lower()
    # The comparison really chooses the flags: an older tag renders the old single-dash form.
    [older] = _documents(helm, tmp_path, "semver-tag", "--set", "image.tag=1.3.0")
    assert older["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "-nginx.scrape-uri=http://rel-nginx:8080/stub_status"]


def test_numeric_tag_is_written_unquoted_and_renders_as_a_number(helm: str, tmp_path: Path) -> None:
    assert "\n  tag: 1.10\n" in (CHARTS / "numeric-tag" / "values.yaml").read_text(encoding="utf-8")
    [deployment] = _documents(helm, tmp_path, "numeric-tag")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":1.1")


def test_tag_in_labels_carries_the_tag_on_three_objects(helm: str, tmp_path: Path) -> None:
    def versions(documents: list[dict[str, Any]]) -> list[str]:
        [deployment] = [document for document in documents if document["kind"] == "Deployment"]
        pod = deployment["spec"]["template"]["metadata"]["labels"]
        return [_labels(documents, kind)["app.kubernetes.io/version"] for kind in ("Deployment", "Service")] + [
            pod["app.kubernetes.io/version"]]

    assert versions(_documents(helm, tmp_path, "tag-in-labels")) == ["v1.67.0"] * 3
    pinned_tag = f"v1.67.0@{DIGEST}"
    tagged = versions(_documents(helm, tmp_path, "tag-in-labels", "--set", f"image.tag={pinned_tag}"))
    assert tagged == [pinned_tag] * 3 and not LABEL_VALUE.fullmatch(pinned_tag)  # the API server refuses these
    assert versions(_documents(helm, tmp_path, "tag-in-labels", "--set", f"image.digest={DIGEST}")) == ["v1.67.0"] * 3


def test_tag_in_selector_puts_a_valid_label_in_the_immutable_selector(helm: str, tmp_path: Path) -> None:
    def selector(*flags: str) -> str:
        [deployment] = [document for document in _documents(helm, tmp_path, "tag-in-selector", *flags)
                        if document["kind"] == "Deployment"]
        version: str = deployment["spec"]["selector"]["matchLabels"]["app.kubernetes.io/version"]
        return version

    assert selector() == "1.27.3"
    changed = selector("--set", f"image.tag=1.27.3@{DIGEST}")
    assert changed == f"1.27.3_sha256_{HEX}"[:63] and LABEL_VALUE.fullmatch(changed)


def test_the_library_subchart_is_vendored_as_a_library(helm: str, tmp_path: Path) -> None:
    common = yaml.safe_load((CHARTS / "library-subchart" / "charts" / "common" / "Chart.yaml").read_text("utf-8"))
    assert common["type"] == "library"
    # The library renders nothing itself: the Deployment is the parent's only object.
    assert [document["kind"] for document in _documents(helm, tmp_path, "library-subchart")] == ["Deployment"]


def test_generated_secrets_differ_between_two_renders_where_they_are_made_afresh(helm: str, tmp_path: Path) -> None:
    first, second = (_documents(helm, tmp_path, "generated-secrets") for _ in range(2))
    secrets = [[document["data"] for document in documents if document["kind"] == "Secret"]
               for documents in (first, second)]
    assert all(a[key] != b[key] for a, b in zip(*secrets, strict=True) for key in a)
    names = [[document["metadata"]["name"] for document in documents if document["kind"] == "Job"]
             for documents in (first, second)]
    assert names[0] != names[1]
    labels = [_documents(helm, tmp_path, "random-label")[0]["spec"]["template"]["metadata"]["labels"]["rollout"]
              for _ in range(2)]
    assert labels[0] != labels[1]
