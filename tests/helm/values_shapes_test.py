"""Helm values read without Helm: the shapes modelled, and the blocks only Helm's render can read (`needs-helm`).

Every fixture is a values file (and, where the chart decides, a small chart) written for these tests.
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from pinguard.sources.base import Found
from pinguard.write.edits import apply, pin_edit
from testing.lockdata import lock_for, locked_test_digest

CHART_YAML = "apiVersion: v2\nname: app\nversion: 0.1.0\nappVersion: {app_version}\n"


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _found(path: Path) -> list[Found]:
    return scan_paths([str(path)]).found


def _pinned(path: Path) -> str:
    """The file's text with every reference pinned to its test digest, as `pin` writes it."""
    text = path.read_text()
    return apply(text, [pin_edit(item, locked_test_digest(item.reference.name, item.reference.tag or "latest"))
                        for item in _found(path) if item.reference is not None and item.reference.digest is None])


def _chart(root: Path, template: str, values: str, app_version: str = '"1.16.0"') -> Path:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text(CHART_YAML.format(app_version=app_version))
    (root / "templates" / "deployment.yaml").write_text(template)
    (root / "values.yaml").write_text(values)
    return root / "values.yaml"


def _references(path: Path) -> list[tuple[int, int, str | None, str | None]]:
    return [(item.line, item.column, str(item.reference) if item.reference else None, item.problem)
            for item in _found(path)]


# JupyterHub: images named by `name` and `tag`, the singleuser one too.
JUPYTERHUB = """\
hub:
  image:
    name: quay.io/jupyterhub/k8s-hub
    tag: "4.1.0"
    pullPolicy: IfNotPresent
singleuser:
  image:
    name: quay.io/jupyterhub/k8s-singleuser-sample
    tag: '4.1.0'
  networkTools:
    image: {name: quay.io/jupyterhub/k8s-network-tools, tag: 4.1.0}
imagePullSecrets: [{name: regcred}]
"""


def test_name_and_tag_blocks_are_pinned_in_the_tag_form(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(JUPYTERHUB)
    assert _references(values) == [
        (3, 11, "quay.io/jupyterhub/k8s-hub:4.1.0", None),
        (8, 11, "quay.io/jupyterhub/k8s-singleuser-sample:4.1.0", None),
        (11, 19, "quay.io/jupyterhub/k8s-network-tools:4.1.0", None),
    ]
    hub = locked_test_digest("quay.io/jupyterhub/k8s-hub", "4.1.0")
    user = locked_test_digest("quay.io/jupyterhub/k8s-singleuser-sample", "4.1.0")
    tools = locked_test_digest("quay.io/jupyterhub/k8s-network-tools", "4.1.0")
    assert _pinned(values) == (JUPYTERHUB.replace('"4.1.0"', f'"4.1.0@{hub}"')
                               .replace("'4.1.0'", f"'4.1.0@{user}'")
                               .replace("tag: 4.1.0}", f'tag: "4.1.0@{tools}"}}'))


# NVIDIA GPU operator: `{repository, image, version}` blocks named after components, one nested in another.
GPU_OPERATOR = """\
operator:
  repository: nvcr.io/nvidia
  image: gpu-operator
  imagePullPolicy: IfNotPresent
driver:
  enabled: true
  repository: nvcr.io/nvidia
  image: driver
  version: "595.91.07"
  manager:
    repository: nvcr.io/nvidia/cloud-native
    image: k8s-driver-manager
    version: v0.8.0
"""


def test_repository_image_version_blocks_join_repository_and_image(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(GPU_OPERATOR)
    no_version = "no version: the chart's appVersion decides it, which a values file does not say"
    assert _references(values) == [
        (3, 10, None, no_version),  # never `gpu-operator:latest`: the chart renders its appVersion
        (8, 10, "nvcr.io/nvidia/driver:595.91.07", None),
        (12, 12, "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.8.0", None),
    ]
    driver = locked_test_digest("nvcr.io/nvidia/driver", "595.91.07")
    manager = locked_test_digest("nvcr.io/nvidia/cloud-native/k8s-driver-manager", "v0.8.0")
    assert _pinned(values) == (GPU_OPERATOR.replace('"595.91.07"', f'"595.91.07@{driver}"')
                               .replace("v0.8.0", f"v0.8.0@{manager}"))


@pytest.mark.parametrize(("template", "version"), [
    # The version defaulted where it is read.
    ("image: {{ .Values.operator.repository }}/{{ .Values.operator.image }}:"
     "{{ .Values.operator.version | default .Chart.AppVersion }}", "v25.3.0"),
    # A helper's own default: not visibly the appVersion alone, so only Helm can tell.
    ('{{- define "fullimage" -}}{{- $tag := printf "%s" .Chart.AppVersion }}{{- if .Values.operator.version }}'
     '{{- $tag = printf "%v" .Values.operator.version }}{{- end }}'
     "{{ .Values.operator.repository }}/{{ .Values.operator.image }}:{{ $tag }}{{- end }}\n"
     'image: {{ include "fullimage" . }}', None),
])
def test_an_absent_version_is_the_appversion_only_where_the_chart_says_so(template: str, version: str | None,
                                                                           tmp_path: Path) -> None:
    values = _chart(tmp_path, template, GPU_OPERATOR, app_version="v25.3.0")
    operator = _found(values)[0]
    assert (operator.line, operator.column) == (3, 10)
    if version is None:
        assert operator.reference is None and operator.needs_helm
        assert operator.problem == ("no version: the chart decides it, and its templates do not visibly default it "
                                    "to its appVersion")
        assert _pinned(values).startswith(GPU_OPERATOR[:GPU_OPERATOR.index("driver:")])  # the block untouched
        return
    assert str(operator.reference) == f"nvcr.io/nvidia/gpu-operator:{version}"
    digest = locked_test_digest("nvcr.io/nvidia/gpu-operator", version)
    assert _pinned(values).startswith(GPU_OPERATOR.split("  imagePull")[0] + f'  version: "{version}@{digest}"\n'
                                      "  imagePullPolicy: IfNotPresent\n")


# cert-manager from 1.20: the registry and namespace every image takes, and images named by `name`.
CERT_MANAGER = """\
imageRegistry: quay.io
imageNamespace: jetstack
image:
  repository: ""
  name: cert-manager-controller
  tag: v1.20.0
webhook:
  image:
    name: cert-manager-webhook
    tag: v1.20.0
"""


def test_registry_and_namespace_for_every_image_prefix_the_name(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(CERT_MANAGER)
    assert _references(values) == [
        (5, 9, "quay.io/jetstack/cert-manager-controller:v1.20.0", None),
        (9, 11, "quay.io/jetstack/cert-manager-webhook:v1.20.0", None),
    ]
    digest = locked_test_digest("quay.io/jetstack/cert-manager-controller", "v1.20.0")
    assert _pinned(values).startswith(CERT_MANAGER[:CERT_MANAGER.index("webhook")].replace("v1.20.0",
                                                                                         f"v1.20.0@{digest}"))
    values.write_text(CERT_MANAGER.replace("imageRegistry: quay.io\nimageNamespace: jetstack\n",
                                           "global:\n  imageRegistry: registry.example.com\n"))
    assert str(_found(values)[0].reference) == "registry.example.com/cert-manager-controller:v1.20.0"


@pytest.mark.parametrize(("values", "problem"), [
    # Set in both places, differently.
    ("global:\n  imageRegistry: registry.example.com\n" + CERT_MANAGER,
     "`imageRegistry` and `global.imageRegistry` differ: which one the chart renders is its own"),
    # An empty repository says the chart composes the name from values this file does not hold.
    (CERT_MANAGER.split("image:", 1)[0].replace("imageRegistry: quay.io\nimageNamespace: jetstack\n", "")
     + "image:\n  repository: \"\"\n  name: cert-manager-controller\n  tag: v1.20.0\n",
     "an empty `repository` beside `name`: the chart names the image from values this file does not set"),
    # A name with its own registry: JupyterHub's charts take it whole, cert-manager's put the registry before it.
    ("imageRegistry: quay.io\n" + JUPYTERHUB,
     "a `name` with its registry, and `imageRegistry`: whether the chart puts that before it is its own"),
])
def test_a_name_the_file_cannot_complete_needs_helm(values: str, problem: str, tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(values)
    first = _found(path)[0]
    assert first.reference is None and first.needs_helm and first.problem == problem


def test_cert_manager_before_1_20_defaults_the_tag_to_the_appversion(tmp_path: Path) -> None:
    # cert-manager's chart before 1.20: `image: {registry, repository}`, the tag left to the appVersion.
    values = "image:\n  registry: quay.io\n  repository: jetstack/cert-manager-controller\n  pullPolicy: IfNotPresent\n"
    path = _chart(tmp_path, 'image: "{{ .Values.image.registry }}/{{ .Values.image.repository }}:'
                            '{{ default .Chart.AppVersion .Values.image.tag }}"', values, app_version="v1.14.4")
    (found,) = _found(path)
    assert (found.line, str(found.reference)) == (3, "quay.io/jetstack/cert-manager-controller:v1.14.4")
    digest = locked_test_digest("quay.io/jetstack/cert-manager-controller", "v1.14.4")
    assert _pinned(path) == values.replace("-controller\n", f'-controller\n  tag: "v1.14.4@{digest}"\n')


EMPTY_TAG = "image:\n  repository: ghcr.io/acme/api\n  tag: \"\"\n"


@pytest.mark.parametrize(("template", "app_version", "tag"), [
    ("image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}", '"1.16.0"', "1.16.0"),
    ("{{- with .Values.image }}\nimage: {{ .repository }}:{{ .tag | default $.Chart.AppVersion | toString }}\n"
     "{{- end }}", '"1.16.0"', "1.16.0"),
    ('{{- define "img" -}}{{ .image.repository }}:{{ .image.tag | default .root.Chart.AppVersion }}{{- end }}\n'
     'image: {{ include "img" (dict "image" .Values.image "root" .) }}', '"1.16.0"', "1.16.0"),
    # Helm reads an unquoted appVersion as YAML: `1.10` is the number 1.1.
    ("image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}", "1.10", "1.1"),
])
def test_an_empty_tag_is_the_appversion_the_chart_defaults_it_to(template: str, app_version: str, tag: str,
                                                                   tmp_path: Path) -> None:
    path = _chart(tmp_path, template, EMPTY_TAG, app_version=app_version)
    (found,) = _found(path)
    assert (found.line, found.column, str(found.reference)) == (2, 15, f"ghcr.io/acme/api:{tag}")
    digest = locked_test_digest("ghcr.io/acme/api", tag)
    pinned = _pinned(path)
    assert pinned == EMPTY_TAG.replace('""', f'"{tag}@{digest}"')
    path.write_text(pinned)
    (again,) = _found(path)
    assert again.reference is not None and again.reference.digest == digest  # reads back pinned


@pytest.mark.parametrize("template", [
    # prometheus-node-exporter style: the tag is `v` and the appVersion.
    'image: {{ .Values.image.repository }}:{{ .Values.image.tag | default (printf "v%s" .Chart.AppVersion) }}',
    'image: {{ .Values.image.repository }}:v{{ .Values.image.tag | default .Chart.AppVersion | printf "%s" }}',
    "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}",
])
def test_an_empty_tag_the_chart_defaults_another_way_needs_helm(template: str, tmp_path: Path) -> None:
    path = _chart(tmp_path, template, EMPTY_TAG)
    (found,) = _found(path)
    assert found.reference is None and found.needs_helm and found.digest_field is None


def test_a_subchart_block_takes_the_subcharts_appversion(tmp_path: Path) -> None:
    values = _chart(tmp_path, "kind: Service", "metrics:\n" + EMPTY_TAG.replace("\n  ", "\n    ").replace(
        "image:", "  image:"))
    sub = tmp_path / "charts" / "metrics"
    (sub / "templates").mkdir(parents=True)
    (sub / "Chart.yaml").write_text("apiVersion: v2\nname: metrics\nversion: 0.1.0\nappVersion: 2.3.4\n")
    (sub / "templates" / "deployment.yaml").write_text(
        "image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}")
    (found,) = _found(values)
    assert str(found.reference) == "ghcr.io/acme/api:2.3.4"


def test_without_the_chart_an_empty_tag_stays_unresolvable(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(EMPTY_TAG)
    (found,) = _found(values)
    assert found.reference is None and not found.needs_helm
    assert found.problem == "no tag: the chart's appVersion decides it, which a values file does not say"


# Blocks whose rendered image the reading would have to guess.
PROMETHEUS = "server:\n  image:\n    repository: quay.io/prometheus/prometheus\n    tag: v3.1.0\n"


@pytest.mark.parametrize(("added", "problem"), [
    ("    distroless: true\n", "`distroless` changes the image the chart renders"),
    ("    hardened: yes\n    flavor: alpine\n", "`hardened`, `flavor` change the image the chart renders"),
    ('    tagSuffix: "-jmx"\n', "`tagSuffix` changes the image the chart renders"),
    ("    version: v3.1.0\n", "`version` beside `repository`: which one holds the tag is the chart's own"),
    ("    name: prometheus\n", "`name` beside `repository`: which one the chart renders is its own"),
    ("    image: prometheus\n", "`image` beside `repository`, and a tag, `registry` or `name` as well"),
])
def test_flags_and_keys_the_reading_does_not_model_need_helm(added: str, problem: str, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(PROMETHEUS + added)
    (found,) = _found(values)
    assert (found.line, found.column, found.value) == (3, 17, "quay.io/prometheus/prometheus")
    assert found.reference is None and found.needs_helm and found.problem == problem
    assert found.digest_field is None and not lock_for([found]).entries


@pytest.mark.parametrize("added", ["    distroless: false\n", '    variant: ""\n', "    fips: ~\n",
                                   "    useDigest: 0\n"])
def test_a_flag_left_off_changes_nothing(added: str, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(PROMETHEUS + added)
    assert [str(item.reference) for item in _found(values)] == ["quay.io/prometheus/prometheus:v3.1.0"]


@pytest.mark.parametrize(("values", "problem"), [
    # kuberay-operator style: Helm reads `1.10` as the number 1.1.
    (PROMETHEUS.replace("v3.1.0", "1.10"), "`tag: 1.10` is not a string to Helm, which reads it as 1.1: quote it"),
    (PROMETHEUS.replace("v3.1.0", "20240101"),
     "`tag: 20240101` is not a string to Helm, which reads it as 2.0240101e+07: quote it"),
    # bitnami style: a registry for every image, which the chart puts in place of the block's.
    ("global:\n  imageRegistry: mirror.example.com\n" + PROMETHEUS,
     "`global.imageRegistry` set for every image: charts put it before `repository`, or in place of the block's "
     "registry"),
])
def test_values_helm_reads_otherwise_need_helm(values: str, problem: str, tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(values)
    (found,) = _found(path)
    assert found.reference is None and found.needs_helm and found.problem == problem


def test_a_number_that_reads_back_the_same_is_a_tag(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(PROMETHEUS.replace("v3.1.0", "1.36"))
    assert [str(item.reference) for item in _found(path)] == ["quay.io/prometheus/prometheus:1.36"]


def test_check_reports_needs_helm_and_pin_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    written = "# Prometheus with its distroless variant, beside a block pinguard reads.\n" + PROMETHEUS + (
        "    distroless: true\nalertmanager:\n  image:\n    repository: quay.io/prometheus/alertmanager\n"
        "    tag: v0.28.0\n")
    Path("values.yaml").write_text(written)
    lock = lock_for(scan_paths(["values.yaml"]).found)
    assert [entry.name for entry in lock] == ["quay.io/prometheus/alertmanager"]  # nothing locked for the guess
    lockfile.write(Path("pinguard.lock"), lock)
    status, out, _ = _run("check", "values.yaml")
    assert status == 1
    assert "values.yaml:4:17: error: only Helm can say what `quay.io/prometheus/prometheus` renders (`distroless` " \
           "changes the image the chart renders): let Helm render the chart to pin it (`--helm PATH`, or helm on " \
           "PATH), or pin it at deploy time with `pinguard post-render` [needs-helm]" in out
    assert "[templated]" not in out  # reported once
    assert _run("pin", "values.yaml")[0] == 0
    pinned = Path("values.yaml").read_text()
    alertmanager = locked_test_digest("quay.io/prometheus/alertmanager", "v0.28.0")
    assert pinned == written.replace("v0.28.0", f"v0.28.0@{alertmanager}")  # the distroless block untouched
    status, out, _ = _run("check", "values.yaml")
    assert status == 1 and out.count("error:") == 1 and "[needs-helm]" in out


# Argo Workflows: items a template joins into `{{item.image}}:{{item.tag}}`, in a list and in a parameter.
ARGO = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: loops-}
spec:
  entrypoint: loop
  arguments:
    parameters:
    - name: os-list
      value: |
        [
          { "image": "alpine", "tag": "3.6" }
        ]
  templates:
  - name: loop
    steps:
    - - name: test-linux
        template: cat-os-release
        withItems:
        - { image: 'debian', tag: '9.1' }
  - name: cat-os-release
    container:
      image: busybox
      command: [cat, /etc/os-release]
"""


def test_image_and_tag_items_in_a_workflow_are_one_reference(tmp_path: Path) -> None:
    path = tmp_path / "workflow.yaml"
    path.write_text(ARGO)
    assert _references(path) == [
        (11, 23, "docker.io/library/alpine:3.6", None),
        (19, 21, "docker.io/library/debian:9.1", None),
        (22, 14, "docker.io/library/busybox", None),  # a container: its `image` alone
    ]
    alpine = locked_test_digest("docker.io/library/alpine", "3.6")
    debian = locked_test_digest("docker.io/library/debian", "9.1")
    busybox = locked_test_digest("docker.io/library/busybox", "latest")
    assert _pinned(path) == (ARGO.replace('"3.6"', f'"3.6@{alpine}"').replace("'9.1'", f"'9.1@{debian}'")
                             .replace("image: busybox", f"image: busybox:latest@{busybox}"))


def test_a_resource_running_its_image_as_written_is_not_split(tmp_path: Path) -> None:
    # Prometheus operator style: `image` is used as it stands, `version` and `tag` only describe it.
    path = tmp_path / "prometheus.yaml"
    path.write_text("apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: k8s}\nspec:\n"
                    "  image: quay.io/prometheus/prometheus\n  tag: v2.0.0\n  version: v2.0.0\n")
    assert [str(item.reference) for item in _found(path)] == ["quay.io/prometheus/prometheus"]


def test_a_resources_own_image_and_tag_are_not_split(tmp_path: Path) -> None:
    # An operator's resource: what it makes of `spec.image` beside `spec.tag` is its own.
    path = tmp_path / "app.yaml"
    path.write_text("apiVersion: example.com/v1\nkind: App\nmetadata: {name: a}\nspec:\n  image: ghcr.io/acme/app\n"
                    "  tag: '1.0'\n")
    assert [str(item.reference) for item in _found(path)] == ["ghcr.io/acme/app"]


APP_VERSION_TEMPLATE = "image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"


def test_what_a_deployments_values_file_leaves_out_comes_from_the_charts_own(tmp_path: Path) -> None:
    # A values file for one deployment, beside the chart's own values.yaml that sets the tag.
    _chart(tmp_path, APP_VERSION_TEMPLATE, "image:\n  repository: ghcr.io/acme/api\n  tag: 2.0.0\n")
    prod = tmp_path / "values-prod.yaml"
    prod.write_text("image:\n  repository: registry.example.com/acme/api\n")
    (found,) = _found(prod)
    assert found.reference is None and found.needs_helm
    assert found.problem == "no tag: it may come from the chart's own values.yaml, or be the chart's appVersion"
    prod.write_text("image:\n  repository: registry.example.com/acme/api\n  tag: ''\n")  # emptied: the appVersion
    assert str(_found(prod)[0].reference) == "registry.example.com/acme/api:1.16.0"


def test_a_parents_values_leave_a_subcharts_tag_to_the_subchart(tmp_path: Path) -> None:
    values = _chart(tmp_path, "kind: Service", "metrics:\n  image:\n    repository: ghcr.io/acme/metrics\n")
    (tmp_path / "charts" / "metrics" / "templates").mkdir(parents=True)
    (tmp_path / "charts" / "metrics" / "Chart.yaml").write_text("apiVersion: v2\nname: metrics\nversion: 0.1.0\n")
    (tmp_path / "charts" / "metrics" / "templates" / "deployment.yaml").write_text(APP_VERSION_TEMPLATE)
    (found,) = _found(values)
    assert found.needs_helm and found.problem == ("no tag: it may come from the values of subchart `metrics`, or be "
                                                  "the chart's appVersion")


def test_a_name_in_a_deployments_values_file_may_take_the_charts_registry(tmp_path: Path) -> None:
    # cert-manager from 1.20, at hand: its own values set `imageRegistry`, a deployment's file only the tag.
    _chart(tmp_path, 'image: {{ printf "%s/%s/%s:%s" .Values.imageRegistry .Values.imageNamespace '
                     ".Values.image.name .Values.image.tag }}", CERT_MANAGER)
    assert str(_found(tmp_path / "values.yaml")[0].reference) == "quay.io/jetstack/cert-manager-controller:v1.20.0"
    prod = tmp_path / "values-prod.yaml"
    prod.write_text("image:\n  name: cert-manager-controller\n  tag: v1.20.1\n")
    (found,) = _found(prod)
    assert found.needs_helm and found.problem == ("the chart reads `imageRegistry`, `imageNamespace`, which may come "
                                                  "from the chart's own values.yaml")
