"""ray-same-image: the head and every worker group of one Ray cluster run the same image.

Ray needs the same Python, Ray and CUDA on every node of a cluster. A worker on
another image joins anyway and fails late (a pickling error, a version check
at the first task) or subtly (another CUDA, another NCCL).

Checked: the Ray container (the first container of each pod template) of the
head and of each worker group of a RayCluster, RayJob, RayService or RayCronJob.
Two references name the same image when registry and repository match and so
do their digests; when neither carries a digest, their tags. A tag alone does
not equal a digest: the tag may have moved. Values that do not parse
(templated) are skipped. One finding per differing worker group, at its image.

PASS: head and workers on `rayproject/ray:2.40.0-py311-gpu@sha256:...` (the same digest)
FAIL: head on `rayproject/ray:2.40.0-py311`, workers on `rayproject/ray:2.40.0-py311-gpu`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from yaml.nodes import Node, ScalarNode

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, at, cluster_spec, containers, get, items
from pinguard.reference import Reference
from pinguard.sources.base import Found
from pinguard.sources.yamlnodes import Located, found_at, scalar_text

ID = "ray-same-image"
TYPE: Final = "document"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "off"}


def check(conf: Conf, document: Node, where: Located) -> Iterator[Problem]:
    spec = cluster_spec(document)
    head = _ray_image(get(spec, "headGroupSpec"), where)
    if head is None or head.reference is None:
        return
    for group in items(get(spec, "workerGroupSpecs")):
        worker = _ray_image(group, where)
        if worker is not None and worker.reference is not None and _key(worker.reference) != _key(head.reference):
            name = scalar_text(get(group, "groupName")) or "(unnamed)"
            yield at(worker, f"worker group `{name}` runs `{worker.value}`, but the head runs `{head.value}`: "
                             "Ray needs the same Python, Ray and CUDA on every node; use the head's image")


def _ray_image(group: Node | None, where: Located) -> Found | None:
    ray = containers(group)[:1] if group is not None else []
    image = get(ray[0], "image") if ray else None
    return found_at(image, where) if isinstance(image, ScalarNode) else None


def _key(reference: Reference) -> tuple[str, str, str]:
    """What makes two references the same image: the digest when either has one, else the tag."""
    return reference.registry, reference.repository, reference.digest or f"tag {reference.tag or 'latest'}"
