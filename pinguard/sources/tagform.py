"""References whose tag is a YAML value of its own, pinned by writing the digest into the tag.

    - image: debian          image: grafana/grafana      image:
      tag: '9.1'             imageTag: 10.4.1              repository: nginx
                                                           tag: 1.25.3

Whatever consumes these (an Ansible loop's `"{{ item.image }}:{{ item.tag }}"`,
a chart's `{{ .repository }}:{{ .tag }}`) joins name and tag with a colon. A
tag written as `9.1@sha256:...` therefore joins into a valid pinned reference,
`debian:9.1@sha256:...`, while a `digest:` field the consumer never reads, or
`debian:latest@sha256:...` beside `tag: '9.1'`, would pin nothing or break it.
"""
from __future__ import annotations

from collections.abc import Callable

from yaml.nodes import MappingNode, Node, ScalarNode

from pinguard.errors import InvalidReference
from pinguard.reference import parse
from pinguard.sources.base import DigestField, Found
from pinguard.sources.yamlnodes import (
    Located,
    is_templated,
    mapping_get,
    same_position,
    scalar_text,
    value_span,
    walk_pairs,
)

# Keys that hold the tag beside an `image:` name, in the spellings charts and playbooks use.
TAG_KEYS = ("tag", "imageTag", "image_tag", "imageVersion", "version")


def tag_field(tag: ScalarNode, where: Located, *, flow: bool,
              to_file: Callable[[int], int] = same_position) -> DigestField | None:
    """Where `@digest` goes in a tag value: after the tag, or over the digest already there.

    A plain value in a flow mapping is quoted as the digest is added: not every YAML
    parser reads `9.1@sha256:...` there as one scalar. None: a value pinguard cannot edit.
    `to_file` maps the positions of a node parsed from YAML embedded in a string to the file's.
    """
    if tag.style not in (None, "", "'", '"'):
        return None
    start, end = _in_file(tag, to_file)
    written = str(tag.value)
    if where.text[start:end] != written:
        return None
    at = written.find("@")
    if at >= 0:
        return DigestField(start + at, end, prefix="@")
    if flow and not tag.style:
        return DigestField(start, end, prefix=f'"{written}@', suffix='"')
    return DigestField(end, end, prefix="@")


def _in_file(node: ScalarNode, to_file: Callable[[int], int]) -> tuple[int, int]:
    """Where a one-line scalar's value sits in the file (see `value_span`)."""
    start, end = value_span(node)
    return to_file(start), to_file(start) + end - start


def split_reference(mapping: MappingNode, image: ScalarNode, where: Located, *, tag_keys: tuple[str, ...] = TAG_KEYS,
                    to_file: Callable[[int], int] = same_position, registry: str = "") -> Found | None:
    """The reference of an `image:` name with its tag in a sibling key; None when there is no such sibling.

    `registry`: what the name is read after (a sibling `registry:`), when set.
    """
    tag_node = next((node for key in tag_keys if isinstance(node := mapping_get(mapping, key), ScalarNode)), None)
    if tag_node is None:
        return None
    start, end = _in_file(image, to_file)
    span = where.span(start, end)
    name, tag = str(image.value), scalar_text(tag_node) or ""
    full = f"{registry}/{name}" if registry else name

    def unresolvable(problem: str) -> Found:
        return Found(where.path, where.source, span, name, None, problem)

    if is_templated(tag):
        return unresolvable(f"templated tag {tag!r} cannot be resolved")
    if not tag:
        line = where.span(*_in_file(tag_node, to_file)).line
        return unresolvable(f"its tag (line {line}) is empty: whatever reads it decides")
    field = tag_field(tag_node, where, flow=mapping.flow_style is True, to_file=to_file)
    if field is None:
        return unresolvable("its tag is not a plain or quoted value; pinguard cannot edit it")
    try:
        reference = parse(f"{full}:{tag}")
    except InvalidReference as exc:
        return unresolvable(f"{full}:{tag}: {exc}")
    return Found(where.path, where.source, span, name, reference, digest_field=field)


def image_mappings(document: Node, where: Located) -> list[Found]:
    """Each `image:` mapping that names its image by `repository` (after `registry`, when set) beside a `tag`, in a
    file that is no Kubernetes object (a values file Helm is handed, a playbook's vars): one reference, found at its
    `repository`, pinned in the tag form."""
    found: list[Found] = []
    for _, key, block in walk_pairs(document):
        repository = mapping_get(block, "repository") if key.value == "image" else None
        if isinstance(block, MappingNode) and isinstance(repository, ScalarNode) and scalar_text(repository) and \
                isinstance(mapping_get(block, "tag"), ScalarNode):
            registry = scalar_text(mapping_get(block, "registry")) or ""
            item = split_reference(block, repository, where, tag_keys=("tag",), registry=registry)
            if item is not None:
                found.append(item)
    return found
