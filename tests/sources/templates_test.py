"""Templates are read line by line; every templated image is reported, never passed over."""
from __future__ import annotations

import pytest

from pinguard.helm import values
from pinguard.sources import kinds
from pinguard.sources.base import Found
from tests.sources.readers import Recorded


def _found(path: str, text: str, kind: str = "template") -> list[Found]:
    found = (values.read(path, text) if kind == kinds.HELM else kinds.find(path, text, kind)).found
    for item in found:
        assert text[item.span.start:item.span.end] == item.value, item
    return found


def _templated(found: list[Found]) -> list[str]:
    assert all(f.reference is None and f.problem == f"templated value {f.value!r} cannot be resolved" for f in found)
    return [f.value for f in found]


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ('image: {{ include "x.fullimage" . }}', '{{ include "x.fullimage" . }}'),
        ('image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"',
         "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"),
        ('image: {{ printf "%s:%s" .Values.a .Values.b | quote }}', '{{ printf "%s:%s" .Values.a .Values.b | quote }}'),
        ("image: '{{ index .Values \"image\" }}'", '{{ index .Values "image" }}'),
        ("  - image: {{ .Values.image }}", "{{ .Values.image }}"),
        ('image_uri: "{{ ray_image }}"', "{{ ray_image }}"),
        ('    "image": "${app_image}",', "${app_image}"),  # a Terraform or ECS JSON template
        ("image: {{ .Values.image }}  # set by the chart", "{{ .Values.image }}"),
        ('image: "{{ .Values.image }}" # set by the chart', "{{ .Values.image }}"),
        ("image: {{ .Values.image }} # {{ not the value }}", "{{ .Values.image }}"),
        ('image: {{ .Values.image | default "nginx # latest" }}', '{{ .Values.image | default "nginx # latest" }}'),
        ("image: {{ .Values.image }} {{/* the chart's */}}", "{{ .Values.image }}"),
        ("image: {{/* the chart's */}} {{ .Values.image }}", "{{/* the chart's */}} {{ .Values.image }}"),
        ("image: {% if gpu %}cuda:12{% else %}ubuntu:24.04{% endif %}",
         "{% if gpu %}cuda:12{% else %}ubuntu:24.04{% endif %}"),
        ("image: {{ image }}:{{ tag | default('latest') }}", "{{ image }}:{{ tag | default('latest') }}"),
        ("image: ${REGISTRY}/app:${TAG}", "${REGISTRY}/app:${TAG}"),
        ('image: "${IMAGE}"', "${IMAGE}"),
        ("image: {{ .Values.image", "{{ .Values.image"),  # an action that goes on to the next line
        ('image: "{{ .Values.image }}', "{{ .Values.image }}"),  # a quote that does too
    ],
)
def test_a_templated_image_line_is_reported(line: str, value: str) -> None:
    found = _found("deploy.yaml.tmpl", f"kind: Pod\n{line}\nname: x\n")
    assert _templated(found) == [value]
    assert found[0].line == 2 and found[0].source == "template"


@pytest.mark.parametrize(
    ("line", "value", "reference"),
    [
        ("image: nginx:1.25", "nginx:1.25", "docker.io/library/nginx:1.25"),
        ("- image: busybox:1.36  # literal", "busybox:1.36", "docker.io/library/busybox:1.36"),
        ("image: 'redis:7'", "redis:7", "docker.io/library/redis:7"),
        ('"image": "ghcr.io/a/b:1",', "ghcr.io/a/b:1", "ghcr.io/a/b:1"),
        ("image: nginx:1.25 {{/* kept by hand */}}", "nginx:1.25", "docker.io/library/nginx:1.25"),
        ("image: nginx:1.25{{- /* kept by hand */ -}}", "nginx:1.25", "docker.io/library/nginx:1.25"),
        ("image_uri: rayproject/ray:2.52.0", "rayproject/ray:2.52.0", "docker.io/rayproject/ray:2.52.0"),
    ],
)
def test_a_literal_image_line_is_read(line: str, value: str, reference: str) -> None:
    (found,) = _found("deploy.yaml.tmpl", f"{{{{- if .Values.on }}}}\n  {line}\n{{{{- end }}}}\n")
    assert (found.value, str(found.reference), found.problem) == (value, reference, None)


@pytest.mark.parametrize("line", [
    "image:", "image:   ", 'image: ""', "image: ''", "image: null", "image: ~", "image: # set below",
    "# image: nginx:1.25", "imagePullPolicy: Always", "images: [nginx]", "my_image: nginx:1.25",
])
def test_lines_that_name_no_image(line: str) -> None:
    assert _found("deploy.yaml.tmpl", f"{line}\n") == []


def test_a_line_that_is_no_reference_says_why() -> None:
    (found,) = _found("deploy.yaml.tmpl", "image: Not An Image\n")
    assert found.reference is None and found.problem and "templated" not in found.problem


def test_lines_inside_template_comments_are_not_rendered() -> None:
    text = """\
{{/*
Usage:
  image: {{ include "x.image" . }}
*/}}
{{- /* image: nginx:1.25 */ -}}
{# image: {{ old_image }} #}
image: {{ include "x.image" . }}
{{/* never closed
image: nginx:1.25
"""
    found = _found("_helpers.tpl", text)
    assert [(f.line, f.column) for f in found] == [(7, 8)]
    assert _templated(found) == ['{{ include "x.image" . }}']


def test_crlf_line_breaks_stay_out_of_values() -> None:
    text = "spec:\r\n  - image: {{ .Values.image }}\r\n  - image: nginx:1.25  # pinned\r\n  - image: 'redis:7'\r\n"
    found = _found("pod.yaml.j2", text)
    assert [(f.line, f.column, f.value) for f in found] == [
        (2, 12, "{{ .Values.image }}"), (3, 12, "nginx:1.25"), (4, 13, "redis:7"),
    ]


def test_a_yaml_file_that_is_no_yaml_reports_templated_lines_with_quotes() -> None:
    text = """\
{{- if .Values.enabled }}
apiVersion: apps/v1
kind: StatefulSet
spec:
  template:
    spec:
      containers:
        - name: redis
          image: {{ template "redis.image" . }}
        - name: metrics
          image: {{ include "redis.metrics.image" . }}
{{- end }}
"""
    found = _found("templates/master.yaml", text, "kubernetes")
    assert [(f.line, f.source) for f in found] == [(9, "kubernetes"), (11, "kubernetes")]
    assert _templated(found) == ['{{ template "redis.image" . }}', '{{ include "redis.metrics.image" . }}']


POD = """\
apiVersion: v1
kind: Pod
spec:
  containers:
  - name: app
    image: {{ .Values.image }}  # YAML reads a mapping in a mapping
  - name: helper
    image: {{ include "x.image" . }}
  - name: fixed
    image: nginx:1.25
  - name: empty
    image: {}
"""


def test_a_template_that_parses_as_yaml_is_reported_where_yaml_sees_a_mapping() -> None:
    found = _found("pod.yaml", POD, "kubernetes")
    assert [(f.line, f.column, f.value, f.reference is None) for f in found] == [
        (6, 12, "{{ .Values.image }}", True),
        (8, 12, '{{ include "x.image" . }}', True),
        (10, 12, "nginx:1.25", False),
    ]
    assert _templated(found[:2]) == ["{{ .Values.image }}", '{{ include "x.image" . }}']
    read = Recorded()
    kinds.find("pod.yaml", POD, "kubernetes", read.settings())
    assert len(read.documents) == 1 and read.forgotten == []  # parsed YAML, not read by lines


def test_a_template_whose_yaml_breaks_after_a_document_takes_that_document_back() -> None:
    text = "kind: Pod\nspec:\n  containers:\n  - image: nginx:1.25\n---\n{{- if .Values.on }}\nimage: x\n{{- end }}\n"
    read = Recorded()
    found = kinds.find("pod.yaml", text, "kubernetes", read.settings())
    assert [f.value for f in found.found] == ["nginx:1.25", "x"]  # read line by line
    assert len(read.documents) == 1 and read.forgotten == ["pod.yaml"]


@pytest.mark.parametrize(
    ("path", "text", "kind"),
    [
        ("values.yaml", "image: {{ .Values.image }}\n", "helm"),
        ("compose.yaml", "services:\n  web:\n    image: {{ web_image }}\n", "compose"),
        ("runtime_env.yaml", "image_uri: {{ ray_image }}\n", "runtime_env"),
        ("task.json", '{"image": {{ .Values.image | toJson }}}\n', "kubernetes"),
    ],
)
def test_every_yaml_kind_reports_a_templated_mapping(path: str, text: str, kind: str) -> None:
    (found,) = _found(path, text, kind)
    assert found.source == kind and found.reference is None and found.value.startswith("{{")


@pytest.mark.parametrize("head", [
    "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\n",
    "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\n",
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n",
])
def test_policies_and_crds_hold_no_templated_images(head: str) -> None:
    assert _found("policy.yaml", head + "spec:\n  x:\n    image: {{ request.object.image }}\n", "kubernetes") == []
