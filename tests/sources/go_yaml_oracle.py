"""How Go's YAML (Helm, kubectl, kustomize) reads a stream, written apart from pinguard's own reading.

PyYAML's constructor, told Go's rules: of a key written twice in one mapping the last
wins (keys merged in with `<<` are not written twice: own keys override them),
`!!binary` is the UTF-8 text its base64 holds, a local tag (`!foo`) keeps the value as
the string it is. The images of a document are every string under an `image` key, at any
depth, of any object but a CustomResourceDefinition, as Kubernetes controllers run them.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode

_MERGE = "tag:yaml.org,2002:merge"


class _GoLoader(yaml.SafeLoader):
    """Records the keys written twice; builds values as Go does."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.written_twice: list[str] = []

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        own = [self.construct_object(key, deep=True) for key, _ in node.value if key.tag != _MERGE]
        self.written_twice.extend(str(key) for index, key in enumerate(own) if key in own[index + 1:])
        return super().construct_mapping(node, deep=deep)  # a dict: the last pair written wins

    def construct_binary(self, node: ScalarNode) -> str:
        return base64.b64decode(str(self.construct_scalar(node))).decode("utf-8", "replace")

    def construct_local(self, suffix: str, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            return self.construct_scalar(node)
        return self.construct_mapping(node) if isinstance(node, MappingNode) else self.construct_sequence(node)


_GoLoader.add_constructor("tag:yaml.org,2002:binary", _GoLoader.construct_binary)
_GoLoader.add_multi_constructor("!", _GoLoader.construct_local)


@dataclass
class Reading:
    """What Go reads from a stream: the images of its documents, and the keys written twice."""

    images: set[str] = field(default_factory=set)
    written_twice: list[str] = field(default_factory=list)


def read(text: str) -> Reading:
    loader = _GoLoader(text)
    reading = Reading()
    try:
        while loader.check_data():
            document = loader.get_data()
            if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition":
                continue
            reading.images.update(_images(document))
    finally:
        loader.dispose()
    reading.written_twice = loader.written_twice
    return reading


def _images(value: Any) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            image = item.get("image")
            if isinstance(image, str):
                found.add(image)
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, dict | list))
    return found
