"""Kubernetes manifests: every container's `image`, whatever the kind, and what is not an image left alone."""
from __future__ import annotations

from pinguard.sources import kubernetes
from pinguard.write.edits import apply, pin_edit

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
    searched = kubernetes.find("k8s.yaml", SKIPPED)
    assert searched.found == [] and searched.documents is not None and len(searched.documents) == 3


def test_a_file_that_never_says_image_is_not_parsed() -> None:
    searched = kubernetes.find("config.yaml", "kind: ConfigMap\ndata: {key: [unclosed\n")
    assert searched.found == [] and searched.documents is None


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
