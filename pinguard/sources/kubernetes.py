"""Kubernetes manifests, CRDs included: every `image` of a container, at any depth.

Pods, templates, CronJobs, RayCluster head and worker groups, RayJob
`rayClusterSpec` and `submitterPodTemplate`, PyTorchJob, JobSet, TrainJob,
Argo, Tekton: all keep images under an `image` key, so the key is the rule,
whatever the kind. Ray's `runtime_env` images (`image_uri`, `container.image`)
inside a RayJob's `runtimeEnvYAML` or a RayService's `serveConfigV2` string are
found and edited in place, inside the block scalar.

Policy documents (Kyverno, Gatekeeper) and CRD schemas hold patterns and
descriptions, not images, and are skipped; so is a Skaffold config's `build`
section, which names the images it builds, not ones it pulls.
"""
from __future__ import annotations

from yaml.nodes import MappingNode, Node, ScalarNode

from pinguard.sources import runtime_env
from pinguard.sources.base import Found, Searched
from pinguard.sources.tagform import split_reference
from pinguard.sources.yamlnodes import (
    Located,
    compose,
    embedded,
    found_at,
    mapping_get,
    scalar_text,
    scalars_under,
    walk_pairs,
)

SOURCE = "kubernetes"
_KEYS = frozenset(("image", "runtimeEnvYAML", "serveConfigV2"))  # the last two hold Ray YAML in a string
_POLICY_GROUPS = ("kyverno.io", "gatekeeper.sh", "constraints.gatekeeper.sh", "templates.gatekeeper.sh")


def find(path: str, text: str) -> Searched:
    if "image" not in text:  # every key this kind looks for says "image"; most CRDs and configs do not
        return Searched([])
    where = Located(text, path, SOURCE)
    found: list[Found] = []
    documents = compose(text)
    for document in documents:
        if not skipped(document):
            built = _built(document)
            found.extend(item for item in find_in(document, where, split=not _is_object(document))
                         if not any(start <= item.span.start < end for start, end in built))
    return Searched(sorted(found, key=lambda f: f.span.start), documents)


def _built(document: Node) -> list[tuple[int, int]]:
    """Where a Skaffold config's `build` sections are (profiles have their own): their `image`
    keys name the images Skaffold builds, not ones it pulls."""
    api_version = scalar_text(mapping_get(document, "apiVersion")) or ""
    if not api_version.startswith("skaffold/"):
        return []
    return [(value.start_mark.index, value.end_mark.index) for _, key, value in walk_pairs(document)
            if key.value == "build"]


def find_in(document: Node, where: Located, *, split: bool) -> list[Found]:
    """Image keys anywhere in one document, and runtime_env images in embedded Ray YAML.

    With `split`, an untagged `image:` beside a tag key (`tag:`, `imageTag:`, ...) is
    one reference with that tag, as playbooks and values files write them. Kubernetes
    objects are read as their controllers read them: `image` alone.
    """
    found: list[Found] = []
    for mapping, key, value in scalars_under(document, _KEYS):
        if key == "image":  # `docker://` as Docker container actions write it (action.yml)
            item = found_at(value, where, prefix="docker://" if str(value.value).startswith("docker://") else "")
            if split and item is not None and item.reference is not None and not (
                item.reference.tag or item.reference.digest
            ):
                item = split_reference(mapping, value, where) or item
            if item is not None:
                found.append(item)
        else:
            found.extend(_embedded_runtime_env(value, where))
    return found


def _embedded_runtime_env(node: ScalarNode, where: Located) -> list[Found]:
    located = embedded(node, where)
    if located is None:
        return []
    inner, to_file = located
    try:
        documents = compose(inner)
    except Exception:
        return []
    return [item for doc in documents for item in runtime_env.find_in(doc, where, to_file)]


def _is_object(document: Node) -> bool:
    """A Kubernetes object (custom resources included), as opposed to values, playbooks, configs."""
    return all(scalar_text(mapping_get(document, key)) for key in ("apiVersion", "kind"))


def skipped(document: Node) -> bool:
    if not isinstance(document, MappingNode):
        return False
    api_version = scalar_text(mapping_get(document, "apiVersion")) or ""
    kind = scalar_text(mapping_get(document, "kind")) or ""
    group = api_version.partition("/")[0]
    return kind == "CustomResourceDefinition" or any(group.endswith(g) for g in _POLICY_GROUPS)
