"""Compose files: `services.<name>.image`."""
from __future__ import annotations

from yaml.nodes import MappingNode, ScalarNode

from pinguard.sources import kinds
from pinguard.sources.base import DEFAULT_SETTINGS, Found, Searched, SourceSettings
from pinguard.sources.yamlnodes import Located, each_document, found_at, mapping_get, mapping_pairs

SOURCE = kinds.COMPOSE


def find(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS) -> Searched:
    where = Located(text, path, SOURCE)
    found: list[Found] = []
    for document in each_document(text):
        settings.read(document, where)
        services = mapping_get(document, "services")
        if not isinstance(services, MappingNode):
            continue
        for _, service in mapping_pairs(services):  # services merged in with `<<` run too
            image = mapping_get(service, "image")
            item = found_at(image, where) if isinstance(image, ScalarNode) else None
            if item is not None:
                found.append(item)
    return Searched(sorted(found, key=lambda f: f.span.start))
