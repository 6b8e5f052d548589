"""Ray `runtime_env` files (YAML or JSON): `image_uri` and `container.image`.

The same finder serves the runtime_env YAML that a RayJob or RayService
embeds in a string (see kubernetes.py).
"""
from __future__ import annotations

from collections.abc import Callable

from yaml.nodes import Node, ScalarNode

from pinguard.sources import kinds
from pinguard.sources.base import DEFAULT_SETTINGS, Found, Searched, SourceSettings
from pinguard.sources.yamlnodes import Located, each_document, found_at, same_position, walk_pairs

SOURCE = kinds.RUNTIME_ENV


def find(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS) -> Searched:
    where = Located(text, path, SOURCE)
    found: list[Found] = []
    for document in each_document(text):
        settings.read(document, where)
        found.extend(find_in(document, where))
    return Searched(sorted(found, key=lambda f: f.span.start))


def find_in(document: Node, where: Located, to_file: Callable[[int], int] = same_position) -> list[Found]:
    pairs = list(walk_pairs(document))
    containers = {id(value) for _, key, value in pairs if key.value == "container"}
    found: list[Found] = []
    for mapping, key, value in pairs:
        if isinstance(value, ScalarNode) and (
            key.value == "image_uri" or (key.value == "image" and id(mapping) in containers)
        ):
            item = found_at(value, where, to_file=to_file)
            if item is not None:
                found.append(item)
    return found
