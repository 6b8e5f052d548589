"""Helm values files: image scalars, and the structured form charts use.

    image:                      image:
      registry: docker.io         repository: quay.io/kuberay/operator
      repository: bitnami/nginx   tag: v1.1.0
      tag: 1.25.3
      digest: ""

The reference is assembled from `registry`, `repository` and `tag`; pinning
fills `digest` (added after `tag` when absent), or `sha` as bare hex where a
chart keeps it that way. An empty tag means the chart's appVersion, which a
values file cannot tell: reported as not resolvable.
"""
from __future__ import annotations

import re

from yaml.nodes import MappingNode, Node, ScalarNode

from pinguard.errors import InvalidReference
from pinguard.reference import parse
from pinguard.sources import kubernetes
from pinguard.sources.base import Found, Searched
from pinguard.sources.yamlnodes import (
    Located,
    compose,
    digest_field,
    is_templated,
    mapping_get,
    scalar_text,
    value_span,
    walk_pairs,
)

SOURCE = "helm"
_IMAGE_KEY = re.compile(r"(?i)(^|[a-z])image$")


def find(path: str, text: str) -> Searched:
    where = Located(text, path, SOURCE)
    found: list[Found] = []
    documents = compose(text)
    for document in documents:
        found.extend(kubernetes.find_in(document, where))
        for mapping in _image_mappings(document):
            item = _structured(mapping, where)
            if item is not None:
                found.append(item)
    return Searched(sorted(found, key=lambda f: f.span.start), documents)


def _image_mappings(document: Node) -> list[MappingNode]:
    return [
        value for _, key, value in walk_pairs(document)
        if isinstance(value, MappingNode) and _IMAGE_KEY.search(str(key.value))
        and isinstance(mapping_get(value, "repository"), ScalarNode)
    ]


def _structured(image: MappingNode, where: Located) -> Found | None:
    repository_node = mapping_get(image, "repository")
    assert isinstance(repository_node, ScalarNode)
    repository = str(repository_node.value)
    registry = scalar_text(mapping_get(image, "registry")) or ""
    tag_node = mapping_get(image, "tag")
    tag = scalar_text(tag_node) or ""
    start, end = value_span(repository_node)
    span = where.span(start, end)
    written = f"{registry}/{repository}:{tag}" if registry else f"{repository}:{tag}"

    def unresolvable(problem: str) -> Found:
        return Found(where.path, SOURCE, span, where.text[start:end], None, problem)

    if not repository:
        return None
    if where.text[start:end] != repository:
        return unresolvable("written with escapes or over several lines; write it as a plain or quoted value")
    if any(is_templated(part) for part in (registry, repository, tag)):
        return unresolvable(f"templated value {written!r} cannot be resolved")
    if not tag or tag_node is None:
        return unresolvable("no tag: the chart's appVersion decides it, which a values file does not say")
    hex_only = mapping_get(image, "digest") is None and mapping_get(image, "sha") is not None
    field = digest_field(image, tag_node, where, "sha" if hex_only else "digest", hex_only=hex_only)
    if field is None:
        return unresolvable("its digest field is not a plain or quoted value; pinguard cannot edit it")
    try:
        reference = parse(written)
        current = where.text[field.start:field.end] if field.start != field.end else ""
        if current and current not in ("~", "null"):
            reference = reference.with_digest(current if not hex_only else "sha256:" + current)
    except InvalidReference as exc:
        return unresolvable(str(exc))
    return Found(where.path, SOURCE, span, repository, reference, digest_field=field)
