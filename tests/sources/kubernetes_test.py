"""Kubernetes manifests: every container's `image`, whatever the kind, and what is not an image left alone."""
from __future__ import annotations

from pinguard.sources import kubernetes
from pinguard.write.edits import apply, pin_edit
from tests.sources.readers import Recorded

DIGEST = "sha256:" + "d" * 64
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  initContainers:
    - name: init
      image: busybox:1.36
  containers:
    - name: web
      image: nginx:1.25
      tag: "2"
"""
SKIPPED = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  image: not-an-image:1
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
spec:
  image: "ghcr.io/*"
---
apiVersion: skaffold/v4beta6
kind: Config
build:
  artifacts:
    - image: built-here
profiles:
  - name: ci
    build:
      artifacts:
        - image: built-in-ci
"""
WORKFLOW = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
spec:
  templates:
    - name: main
      steps:
        - - name: print
            withItems:
              - {image: debian, tag: '9.1'}
              - image: alpine
                tag: "3.19"
      arguments:
        parameters:
          - name: os-list
            value: |
              [{"image": "ubuntu", "tag": "22.04"}]
"""


def _places(path: str, text: str) -> list[tuple[str, int, int, str]]:
    return [(f.value, f.line, f.column, str(f.reference)) for f in kubernetes.find(path, text).found]


def test_every_container_image_is_found_as_its_controller_reads_it() -> None:
    assert _places("pod.yaml", POD) == [("busybox:1.36", 8, 14, "docker.io/library/busybox:1.36"),
                                        ("nginx:1.25", 11, 14, "docker.io/library/nginx:1.25")]  # `tag:` no concern


def test_policies_crds_and_what_skaffold_builds_are_no_images() -> None:
    read = Recorded()
    assert kubernetes.find("k8s.yaml", SKIPPED, read.settings()).found == []
    assert len(read.documents) == 3  # parsed, and handed on to the rules that read documents


def test_a_file_that_never_says_image_is_not_parsed() -> None:
    read = Recorded()
    assert kubernetes.find("config.yaml", "kind: ConfigMap\ndata: {key: [unclosed\n", read.settings()).found == []
    assert read.documents == []


def test_list_items_joined_into_a_reference_are_pinned_in_their_tag() -> None:
    assert _places("workflow.yaml", WORKFLOW) == [
        ("debian", 9, 25, "docker.io/library/debian:9.1"), ("alpine", 10, 24, "docker.io/library/alpine:3.19"),
        ("ubuntu", 16, 27, "docker.io/library/ubuntu:22.04")]  # inside the parameter's JSON string
    found = kubernetes.find("workflow.yaml", WORKFLOW).found
    pinned = apply(WORKFLOW, [pin_edit(item, DIGEST) for item in found])
    assert pinned == (WORKFLOW.replace("'9.1'", f"'9.1@{DIGEST}'").replace('"3.19"', f'"3.19@{DIGEST}"')
                      .replace('"22.04"', f'"22.04@{DIGEST}"'))
    assert [str(item.reference) for item in kubernetes.find("workflow.yaml", pinned).found] == [
        f"docker.io/library/debian:9.1@{DIGEST}", f"docker.io/library/alpine:3.19@{DIGEST}",
        f"docker.io/library/ubuntu:22.04@{DIGEST}"]


def test_outside_kubernetes_objects_a_tag_beside_the_image_completes_it() -> None:
    playbook = "- hosts: all\n  vars:\n    app:\n      image: grafana/grafana\n      imageTag: 10.4.1\n"
    assert _places("playbook.yaml", playbook) == [("grafana/grafana", 4, 14, "docker.io/grafana/grafana:10.4.1")]


def test_ray_runtime_env_images_are_found_inside_the_string_that_holds_them() -> None:
    rayjob = ("apiVersion: ray.io/v1\nkind: RayJob\nspec:\n  runtimeEnvYAML: |\n    pip: [torch]\n"
              "    image_uri: rayproject/ray:2.9.0\n")
    (found,) = kubernetes.find("rayjob.yaml", rayjob).found
    assert (found.value, found.line, found.column, found.source) == ("rayproject/ray:2.9.0", 6, 16, "kubernetes")
    assert rayjob[found.span.start:found.span.end] == "rayproject/ray:2.9.0"


# As Go's YAML reads a manifest (Helm, kubectl, kustomize).
def test_a_kind_written_twice_is_the_last_and_the_pod_is_not_skipped_as_a_crd() -> None:
    text = "kind: CustomResourceDefinition\nkind: Pod\nspec:\n  containers:\n  - image: nginx:1.25\n  - image: a:1\n" \
           "    image: b:2\n"
    assert [(value, line) for value, line, _, _ in _places("pod.yaml", text)] == [("nginx:1.25", 5), ("b:2", 7)]


def test_a_key_written_with_escapes_or_a_tag_is_read_though_the_file_never_says_image() -> None:
    for key in (r'"\x69mage"', r'"\u0069mage"', "!!binary aW1hZ2U=", "!<tag:yaml.org,2002:binary> aW1hZ2U="):
        assert _places("pod.yaml", f"kind: Pod\nspec:\n  containers:\n  - {key}: nginx:1.25\n")[0][0] == "nginx:1.25"


def test_a_runtime_env_string_with_an_escaped_key_is_read() -> None:
    text = ("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nspec:\n  parameters:\n  - name: os\n"
            "    value: '[{\"\\x69mage\": debian, \"tag\": \"9\"}]'\n")
    assert [reference for *_, reference in _places("wf.yaml", text)] == ["docker.io/library/debian:9"]


def test_a_tagged_image_is_read_as_go_reads_it() -> None:
    def found(value: str) -> tuple[str | None, str | None, str | None]:
        (item,) = kubernetes.find("pod.yaml", f"kind: Pod\nspec:\n  containers:\n  - image: {value}\n").found
        decoded = str(item.decoded) if item.decoded else None
        return str(item.reference) if item.reference else None, decoded, item.problem

    assert found("!!str nginx:1.25") == ("docker.io/library/nginx:1.25", None, None)
    assert found("!local nginx:1.25") == ("docker.io/library/nginx:1.25", None, None)  # a local tag: kept as a string
    assert found("!!binary bmdpbng6MS4yNQ==")[:2] == (None, "docker.io/library/nginx:1.25")  # not pinnable in place
    refused = "tagged `!!int`: Go's YAML reads no string there, and Kubernetes refuses it"
    assert found("!!int 5") == (None, None, refused)
    assert found("!!binary not*base64")[2] == "tagged `!!binary` but no base64: Go's YAML refuses the document"
