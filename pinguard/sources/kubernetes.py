"""Kubernetes manifests, CRDs included: every `image` of a container, at any depth.

Pods, templates, CronJobs, RayCluster head and worker groups, RayJob
`rayClusterSpec` and `submitterPodTemplate`, PyTorchJob, JobSet, TrainJob,
Argo, Tekton: all keep images under an `image` key, so the key is the rule,
whatever the kind. Ray's `runtime_env` images (`image_uri`, `container.image`)
inside a RayJob's `runtimeEnvYAML` or a RayService's `serveConfigV2` string are
found and edited in place, inside the block scalar.

An `image` beside a `tag` in a list item that is no container (containers have
`command`, `resources`, ... and never a `tag`) is data a template joins into a
reference, as an Argo Workflow's `withItems: [{image: debian, tag: '9.1'}]`
feeds `{{item.image}}:{{item.tag}}`: one reference, pinned in the tag form (see
tagform.py). So are such items in the YAML or JSON string of a workflow
parameter (`parameters: [{name: os-list, value: '[{"image": ...}]'}]`).

Policy documents (Kyverno, Gatekeeper) and CRD schemas hold patterns and
descriptions, not images, and are skipped; so is a Skaffold config's `build`
section, which names the images it builds, not ones it pulls.
"""
from __future__ import annotations

from collections.abc import Callable

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.sources import kinds, runtime_env
from pinguard.sources.base import DEFAULT_SETTINGS, Found, Searched, SourceError, SourceSettings
from pinguard.sources.tagform import image_mappings, split_reference
from pinguard.sources.yamlnodes import (
    Located,
    compose,
    each_document,
    embedded,
    found_at,
    mapping_get,
    mapping_pairs,
    may_hold,
    same_position,
    scalar_text,
    scalars_under,
    walk_pairs,
)

SOURCE = kinds.KUBERNETES
_KEYS = frozenset(("image", "runtimeEnvYAML", "serveConfigV2"))  # the last two hold Ray YAML in a string
_POLICY_GROUPS = ("kyverno.io", "gatekeeper.sh", "constraints.gatekeeper.sh", "templates.gatekeeper.sh")
# Keys of a container (or of a custom resource that runs its `image` as written, as the Prometheus
# operator's do beside their `version`): an `image` beside them is read alone, whatever else is there.
_RUNS_IMAGE_KEYS = frozenset(("command", "args", "env", "envFrom", "ports", "resources", "volumeMounts",
                              "imagePullPolicy", "workingDir", "securityContext", "livenessProbe", "readinessProbe",
                              "startupProbe", "lifecycle", "version", "baseImage", "sha"))
_PARAMETER_VALUES = ("value", "default")


def find(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS) -> Searched:
    if not may_hold(text, "image"):  # every key this kind looks for says "image"; most CRDs and configs do not
        return Searched([])
    where = Located(text, path, SOURCE)
    found: list[Found] = []
    for document in each_document(text):  # one at a time: a file of many documents is never held whole as nodes
        settings.read(document, where)
        if not skipped(document):
            built = _built(document)
            is_object = _is_object(document)
            items = find_in(document, where, split=not is_object)
            if is_object:
                items.extend(_in_parameters(document, where))
            else:  # values handed to Helm, vars: `image: {repository, tag}` (tagform.py)
                items.extend(image_mappings(document, where))
            found.extend(item for item in items if not any(start <= item.span.start < end for start, end in built))
    return Searched(sorted(found, key=lambda f: f.span.start))


def _built(document: Node) -> list[tuple[int, int]]:
    """Where a Skaffold config's `build` sections are (profiles have their own): their `image`
    keys name the images Skaffold builds, not ones it pulls."""
    api_version = scalar_text(mapping_get(document, "apiVersion")) or ""
    if not api_version.startswith("skaffold/"):
        return []
    return [(value.start_mark.index, value.end_mark.index) for _, key, value in walk_pairs(document)
            if key.value == "build"]


def find_in(document: Node, where: Located, *, split: bool, skip: frozenset[int] = frozenset(),
            to_file: Callable[[int], int] = same_position) -> list[Found]:
    """Image keys anywhere in one document, and runtime_env images in embedded Ray YAML.

    With `split`, an untagged `image:` beside a tag key (`tag:`, `imageTag:`, ...) is
    one reference with that tag, as playbooks and values files write them. Kubernetes
    objects are read as their controllers read them: `image` alone, but for data items
    (`_is_data_item`). `skip`: mappings (by id) whose `image` is part of another reference
    (a Helm image block). `to_file` maps the positions of YAML embedded in a string.
    """
    found: list[Found] = []
    listed: set[int] | None = None  # the mappings that are items of a list, found when first asked
    for mapping, key, value in scalars_under(document, _KEYS):
        if id(mapping) in skip:
            continue
        if key == "image":  # `docker://` as Docker container actions write it (action.yml)
            prefix = "docker://" if str(value.value).startswith("docker://") else ""
            item = found_at(value, where, prefix=prefix, to_file=to_file)
            if item is not None and item.reference is not None and not (item.reference.tag or item.reference.digest):
                if split:
                    item = split_reference(mapping, value, where, to_file=to_file) or item
                elif _is_data_item(mapping) and id(mapping) in (listed := _list_items(document, listed)):
                    item = split_reference(mapping, value, where, tag_keys=("tag",), to_file=to_file) or item
            if item is not None:
                found.append(item)
        elif to_file is same_position:
            found.extend(_embedded_runtime_env(value, where))
    return found


def _is_data_item(mapping: MappingNode) -> bool:
    """An `image` beside a `tag`, in a mapping that is no container: data a template joins into one reference.

    Only a list's items count (`_list_items`): a resource's own `spec: {image, tag}` means what its operator
    makes of it, which may be the image alone.
    """
    return isinstance(mapping_get(mapping, "tag"), ScalarNode) and not any(
        isinstance(key, ScalarNode) and key.value in _RUNS_IMAGE_KEYS for key, _ in mapping_pairs(mapping))


def _list_items(document: Node, known: set[int] | None) -> set[int]:
    """The ids of the mappings that are items of a list in `document` (`known`, once worked out)."""
    if known is not None:
        return known
    items: set[int] = set()
    seen: set[int] = set()
    stack: list[Node] = [document]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, SequenceNode):
            items.update(id(item) for item in node.value)
            stack.extend(node.value)
        elif isinstance(node, MappingNode):
            stack.extend(value for _, value in node.value)
    return items


def _in_parameters(document: Node, where: Located) -> list[Found]:
    """Images in the YAML or JSON string a parameter holds (`parameters: [{name, value: '[{"image": ...}]'}]`).

    A double-quoted one-line string is left alone: the tag form may quote a tag, which would end that string.
    """
    found: list[Found] = []
    for _, key, parameters in walk_pairs(document):
        if key.value != "parameters" or not isinstance(parameters, SequenceNode):
            continue
        for parameter in parameters.value:
            for name in _PARAMETER_VALUES:
                value = mapping_get(parameter, name)
                if isinstance(value, ScalarNode) and value.style != '"' and may_hold(str(value.value), "image"):
                    found.extend(_embedded_items(value, where))
    return found


def _embedded_items(node: ScalarNode, where: Located) -> list[Found]:
    return [item for document, to_file in _embedded_documents(node, where)
            for item in find_in(document, where, split=False, to_file=to_file)]


def _embedded_runtime_env(node: ScalarNode, where: Located) -> list[Found]:
    return [item for document, to_file in _embedded_documents(node, where)
            for item in runtime_env.find_in(document, where, to_file)]


def _embedded_documents(node: ScalarNode, where: Located) -> list[tuple[Node, Callable[[int], int]]]:
    """The YAML documents a string holds, with the map from their positions to the file's; none if it is no YAML."""
    located = embedded(node, where)
    if located is None:
        return []
    inner, to_file = located
    try:
        return [(document, to_file) for document in compose(inner)]
    except SourceError:
        return []


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
