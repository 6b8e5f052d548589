"""Which line controls an image a kustomization builds.

Two kinds of line can: an `images:` entry of a kustomization the build reaches
(`newName`, `newTag`, `digest`), the outermost one first, as kustomize applies the
overlay's entries last; and a value that writes the image whole, in a resource, a
patch file, or an inline patch inside a kustomization (found by its text, not
inside a longer name). An image built from pieces (replacements, generators) has
neither; it is reported at the kustomization built.

This only nominates: a pin is kept only when a second build confirms it (pinning.py).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.helm.trace import Parts
from pinguard.sources import kinds
from pinguard.sources.yamlnodes import Located, mapping_get, scalar_text, value_span

_FIELDS = ("name", "newName", "newTag", "digest")


@dataclass(frozen=True, eq=False)
class Entry:
    """One `images:` entry of a kustomization: its mapping and the values of its fields."""

    where: Located
    node: MappingNode
    values: dict[str, str]

    @property
    def path(self) -> Path:
        return Path(self.where.path)

    def sets(self, parts: Parts) -> bool:
        """Whether this entry makes an image `parts` names: it renames, retags or pins, and the build agrees."""
        name = self.values.get("newName") or self.values.get("name")
        if name != parts.name or not {"newName", "newTag", "digest"} & self.values.keys():
            return False
        return self.values.get("newTag", parts.tag) == parts.tag and self.values.get("digest", parts.digest) == \
            parts.digest

    def span(self) -> tuple[int, int]:
        """The characters a finding about the entry points at: its tag, else its new name, digest, name."""
        for key in ("newTag", "newName", "digest", "name"):
            node = mapping_get(self.node, key)
            if isinstance(node, ScalarNode):
                return value_span(node)
        return self.node.start_mark.index, self.node.start_mark.index


@dataclass(frozen=True)
class Written:
    """Where a file writes an image whole: characters [start, end) of its text."""

    where: Located
    start: int
    end: int

    @property
    def path(self) -> Path:
        return Path(self.where.path)

    @property
    def value(self) -> str:
        return self.where.text[self.start:self.end]


@dataclass(frozen=True)
class Trace:
    entry: Entry | None  # the outermost `images:` entry that makes the image
    written: Written | None  # where it is written whole, preferring the files of the scan
    tag: str | None  # the tag it is locked under, where the build dropped it for a digest (`name@digest`)


class Inputs:
    """The texts a build reads: kustomization files (outermost first) and the files they name."""

    def __init__(self, kustomizations: Sequence[tuple[Path, str, list[Node]]], files: Sequence[tuple[Path, str]],
                 scanned: frozenset[Path]) -> None:
        self._entries: list[Entry] = []
        for path, text, documents in kustomizations:
            where = Located(text, path.as_posix(), kinds.KUSTOMIZE)
            for document in documents:
                images = mapping_get(document, "images") if isinstance(document, MappingNode) else None
                for node in images.value if isinstance(images, SequenceNode) else ():
                    if isinstance(node, MappingNode):
                        values = {key: value for key in _FIELDS if (value := scalar_text(mapping_get(node, key)))}
                        self._entries.append(Entry(where, node, values))
        texts = [(path, text) for path, text, _ in kustomizations] + list(files)
        # Files of the scan first: a place there can be pinned, one outside it only pointed at.
        self._texts = sorted((Located(text, path.as_posix(), kinds.KUSTOMIZE) for path, text in texts),
                             key=lambda where: Path(where.path) not in scanned)

    def trace(self, image: str) -> Trace:
        parts = Parts.of(image)
        entry = next((entry for entry in self._entries if entry.sets(parts)), None)
        forms = [image, f"{parts.name}:{parts.tag}"] if parts.digest and parts.tag else [image]
        written = next((found for form in forms if (found := self._written(form)) is not None), None)
        tag = None
        if parts.digest and not parts.tag:
            original = entry.values.get("name", parts.name) if entry is not None else parts.name
            tag = self._tag_of(original)
        return Trace(entry, written, tag)

    def _written(self, form: str) -> Written | None:
        pattern = re.compile(rf"(?<![\w./:@-]){re.escape(form)}(?![\w./:@-])")
        for where in self._texts:
            for match in pattern.finditer(where.text):
                if not _in_comment(where.text, match.start()):
                    return Written(where, match.start(), match.end())
        return None

    def _tag_of(self, name: str) -> str | None:
        """The tag an image of `name` is written with in some file, for a build that shows only its digest."""
        pattern = re.compile(rf"(?<![\w./:@-]){re.escape(name)}:([\w][\w.-]{{0,127}})(?![\w./:-])")
        for where in self._texts:
            for match in pattern.finditer(where.text):
                if not _in_comment(where.text, match.start()):
                    return match.group(1)
        return None


def _in_comment(text: str, index: int) -> bool:
    line = text[text.rfind("\n", 0, index) + 1:index]
    return line.lstrip().startswith("#") or " #" in line
