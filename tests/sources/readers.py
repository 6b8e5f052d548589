"""A DocumentReader that records what a source hands it, for tests of what goes on past a source."""
from __future__ import annotations

from dataclasses import replace

from yaml.nodes import Node

from pinguard.sources.base import DEFAULT_SETTINGS, SourceSettings
from pinguard.sources.yamlnodes import Located


class Recorded:
    """Every document handed on, with the path of its file; `forgotten`: the paths a source took back."""

    def __init__(self) -> None:
        self.documents: list[tuple[str, Node]] = []
        self.forgotten: list[str] = []

    def __call__(self, document: Node, where: Located) -> None:
        self.documents.append((where.path, document))

    def forget(self, path: str) -> None:
        self.forgotten.append(path)

    def settings(self, settings: SourceSettings = DEFAULT_SETTINGS) -> SourceSettings:
        return replace(settings, reader=self)
