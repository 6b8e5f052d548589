"""Compose files: `services.<name>.image`."""
from __future__ import annotations

from yaml.nodes import MappingNode, ScalarNode

from pinguard.sources.base import Found
from pinguard.sources.yamlnodes import Located, compose, found_at, mapping_get

SOURCE = "compose"


def find(text: str, path: str) -> list[Found]:
    where = Located(text, path, SOURCE)
    found: list[Found] = []
    for document in compose(text):
        services = mapping_get(document, "services")
        if not isinstance(services, MappingNode):
            continue
        for _, service in services.value:
            image = mapping_get(service, "image")
            item = found_at(image, where) if isinstance(image, ScalarNode) else None
            if item is not None:
                found.append(item)
    return sorted(found, key=lambda f: f.span.start)
