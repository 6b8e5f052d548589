from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from pinguard.helm import values as helm_values
from pinguard.sources import kinds
from pinguard.sources.base import SourceError, SourceSettings

K8S = "apiVersion: v1\nkind: Pod\n"
WORKFLOW = "name: ci\non: [push]\njobs:\n  a: {}\n"
COMPOSE = "services:\n  web:\n    image: nginx\n"
KUSTOMIZE = "resources: [a.yaml]\nimages:\n- name: nginx\n"


@pytest.mark.parametrize(
    ("path", "text", "kind"),
    [
        ("Dockerfile", "", "dockerfile"),
        ("build/Dockerfile.cuda", "", "dockerfile"),
        ("app.Dockerfile", "", "dockerfile"),
        ("Containerfile", "", "dockerfile"),
        ("scorecard-testdata-Dockerfile-args", "", "dockerfile"),
        ("build/Dockerfile.j2", "", "dockerfile"),  # a templated Dockerfile: its FROM lines are still found
        ("k8s/pod.yaml", K8S, "kubernetes"),
        ("k8s/pod.json", '{"kind": "Pod"}', "kubernetes"),
        ("deploy.yaml-template", K8S, "kubernetes"),
        ("compose.yaml", "", "compose"),
        ("docker-compose.prod.yml", "", "compose"),
        ("django.compose.yaml", "", "compose"),
        ("stack.yml", COMPOSE, "compose"),
        (".github/workflows/ci.yml", "", "workflow"),
        ("action.yml", "", "workflow"),
        ("ci-tests.yml", WORKFLOW, "workflow"),
        ("values.yaml", "", "helm"),
        ("values-prod.yaml", "", "helm"),
        ("bitnami-nginx-values.yaml", "", "helm"),
        ("kustomization.yaml", "", "kustomize"),
        ("overlays-kustomization.yaml", "", "kustomize"),
        ("base.yml", KUSTOMIZE, "kustomize"),
        ("runtime_env.yaml", "", "runtime_env"),
        ("job-runtime-env.json", "", "runtime_env"),
        ("deploy.yaml.in", K8S, "kubernetes"),
        ("chart/templates/_helpers.tpl", "", "template"),
        ("ecs/task-definition.json.tpl", "", "template"),
        ("chart/templates/deployment.yaml.tpl", K8S, "template"),
        ("deployment.yaml.template", K8S, "template"),
        ("deployment.YML.TEMPLATE", K8S, "template"),
        ("deployment.yaml.tmpl", K8S, "template"),
        ("helmfile.d/values.yaml.gotmpl", "", "template"),
        ("ansible/playbook.yml.j2", "", "template"),
        ("runtime_env.yaml.j2", "", "template"),
        (".github/workflows/ci.yml.j2", WORKFLOW, "template"),
        ("dockerfile-values.yaml.gotmpl", "", "template"),  # a YAML name, not a Dockerfile
    ],
)
def test_detect(path: str, text: str, kind: str) -> None:
    assert kinds.may_hold_images(path.rpartition("/")[2])
    assert kinds.detect(path, text) == kind


def test_every_source_is_in_the_one_table_under_its_own_kind() -> None:
    texts = {path.stem: path.read_text(encoding="utf-8") for path in Path(kinds.__file__).parent.glob("*.py")}
    with_finders = {name for name, text in texts.items() if "\nSOURCE = " in text and "\ndef find(" in text}
    assert set(kinds.MODULES.values()) == with_finders
    for kind, name in kinds.MODULES.items():
        assert importlib.import_module(f"pinguard.sources.{name}").SOURCE == kind
        assert kinds.finder(kind) is importlib.import_module(f"pinguard.sources.{name}").find


def test_the_settings_reach_the_source_through_the_table() -> None:
    values = 'image:\n  repository: nginx\n  tag: "1.25"\n---\nimage: busybox\n'
    read: list[tuple[str, int]] = []
    settings = SourceSettings(reader=lambda document, where: read.append((where.path, document.start_mark.line)))
    found = kinds.find("deploy/values.yaml", values, "helm", settings, helm_values.find).found
    assert [str(item.reference) for item in found] == ["docker.io/library/nginx:1.25", "docker.io/library/busybox"]
    assert read == [("deploy/values.yaml", 0), ("deploy/values.yaml", 4)]  # each document handed on, once


@pytest.mark.parametrize(
    "name", ["Dockerfile.md", "Dockerfile.MD", "README.md", "main.py", "notes.txt", "chart.tgz", "tpl"],
)
def test_other_files_are_not_read(name: str) -> None:
    assert not kinds.may_hold_images(name)


TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: app
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
        - name: fixed
          image: busybox:1.36  # literal
{{- if .Values.extra }}
        - image: {{ .Values.extra }}
{{- end }}
"""


def test_a_template_that_is_not_yaml_is_read_line_by_line() -> None:
    found = kinds.find("templates/deploy.yaml", TEMPLATE, "kubernetes").found
    assert [(f.line, f.column, f.value, f.reference is not None) for f in found] == [
        (8, 19, "{{ .Values.image.repository }}:{{ .Values.image.tag }}", False),
        (10, 18, "busybox:1.36", True),
        (12, 18, "{{ .Values.extra }}", False),
    ]
    assert all(TEMPLATE[f.span.start:f.span.end] == f.value for f in found)


def test_invalid_yaml_without_templates_is_an_error() -> None:
    with pytest.raises(SourceError) as raised:
        kinds.find("pod.yaml", "kind: Pod\nspec: [image: x\n  - y\n", "kubernetes")
    assert raised.value.line >= 2 and "invalid YAML" in str(raised.value)


def test_a_mapping_used_as_a_key_is_no_image_key() -> None:
    (templated,) = kinds.find("x.yaml", "  image: {{}}\n  (:", "kubernetes").found  # a mapping, written `{{`
    assert (templated.value, templated.reference) == ("{{}}", None)
    assert kinds.find("x.yaml", "{{}}: nginx:1.25\nimage: nginx:1.25\n", "kubernetes").found[0].value == "nginx:1.25"


@pytest.mark.parametrize(("text", "kind"), [
    ('"\\x6aobs":\n  a: {container: node:18}\non: push\n', "workflow"),
    ("? !!binary am9icw==\n: {a: {container: node:18}}\n'on': push\n", "workflow"),
    ('"\\x61piVersion": v1\nkind: Pod\nservices: {}\n', "kubernetes"),
    ('%TAG !e! tag:yaml.org,2002:\n---\n!e!binary c2VydmljZXM=: {web: {image: nginx}}\n', "compose"),
])
def test_a_top_level_key_written_with_escapes_or_a_tag_is_read_decoded(text: str, kind: str) -> None:
    assert kinds.detect("x.yaml", text) == kind


@pytest.mark.parametrize(("path", "text", "kind"), [
    ("chart/env/prod.yaml", "image:\n  tag: '1.2'\n", "helm"),  # handed to Helm with `-f`
    ("chart/ci/test.yml", "replicas: 2\n", "helm"),
    ("chart/Chart.yaml", "apiVersion: v2\nname: app\n", "kubernetes"),
    ("chart/Chart.lock", "dependencies: []\n", "kubernetes"),
    ("chart/templates/pod.yaml", "image: {{ .Values.image }}\n", "kubernetes"),
    ("chart/charts/sub/templates/pod.yaml", "x: 1\n", "kubernetes"),
    ("chart/crds/crd.yaml", "spec: {}\n", "kubernetes"),
    ("chart/extra/pod.yaml", K8S, "kubernetes"),  # a Kubernetes object is none
    ("chart/values.schema.json", "{}", "kubernetes"),  # not YAML
    ("chart/env/compose.yaml", "", "compose"),  # named for what it is
    ("elsewhere/prod.yaml", "image:\n  tag: '1.2'\n", "kubernetes"),  # in no chart
])
def test_yaml_in_a_charts_folder_is_values(path: str, text: str, kind: str) -> None:
    chart = "elsewhere/chart" if path.startswith("elsewhere/") else "chart"
    assert kinds.detect(path, text, chart=chart) == kind


def test_a_values_file_the_policy_names_is_values_wherever_it_is() -> None:
    assert kinds.detect("deploy/prod.yaml", "image:\n  tag: '1.2'\n", named_values=True) == "helm"
