"""kustomization.yaml `images:` entries: `name`, `newName`, `newTag`, `digest`.

The image is `newName` (else `name`) at `newTag`; pinning fills `digest`,
added after `newTag` when absent. An entry without `newTag` leaves the tag
to the manifests it patches, which are scanned on their own.
"""
from __future__ import annotations

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from pinguard.errors import InvalidReference
from pinguard.reference import parse
from pinguard.sources import kinds
from pinguard.sources.base import DEFAULT_SETTINGS, Found, Searched, SourceSettings
from pinguard.sources.yamlnodes import (
    Located,
    compose,
    digest_field,
    is_templated,
    mapping_get,
    scalar_text,
    value_span,
)

SOURCE = kinds.KUSTOMIZE


def find(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS) -> Searched:
    where = Located(text, path, SOURCE)
    found: list[Found] = []
    documents = compose(text)
    for document in documents:
        images = mapping_get(document, "images")
        if isinstance(images, SequenceNode):
            for entry in images.value:
                item = _entry(entry, where) if isinstance(entry, MappingNode) else None
                if item is not None:
                    found.append(item)
    return Searched(found, documents)


def _entry(entry: MappingNode, where: Located) -> Found | None:
    name_node = mapping_get(entry, "newName") or mapping_get(entry, "name")
    tag_node = mapping_get(entry, "newTag")
    name, tag = scalar_text(name_node), scalar_text(tag_node)
    if not isinstance(name_node, ScalarNode) or not name or tag_node is None or not tag:
        return None
    start, end = value_span(name_node)
    span = where.span(start, end)
    if where.text[start:end] != name:
        return Found(where.path, SOURCE, span, where.text[start:end], None,
                     "written with escapes or over several lines; write it as a plain or quoted value")
    if is_templated(name) or is_templated(tag):
        return Found(where.path, SOURCE, span, name, None, f"templated value {name}:{tag!r} cannot be resolved")
    field = digest_field(entry, tag_node, where, "digest")
    try:
        reference = parse(f"{name}:{tag}")
        digest = scalar_text(mapping_get(entry, "digest"))
        if digest:
            reference = reference.with_digest(digest)
    except InvalidReference as exc:
        return Found(where.path, SOURCE, span, name, None, str(exc))
    if field is None:
        return Found(where.path, SOURCE, span, name, None, "its digest is not a plain or quoted value; cannot pin it")
    return Found(where.path, SOURCE, span, name, reference, digest_field=field)
