"""Which files each kustomization reads, with no binary: its bases, components, resources and patch files.

A scan's kustomizations are read once; the ones no other kustomization of the scan reaches are the
ones built (an overlay, not the base it builds on). A reached file is known by its resolved path.
Only local paths are followed: a remote entry is never fetched (`sources/kustomize.py` reports it).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.kustomize.settings import NAMES
from pinguard.read.files import TextFile, UnreadableFile
from pinguard.sources.base import SourceError
from pinguard.sources.kustomize import is_remote, remote_entries
from pinguard.sources.yamlnodes import compose

# The fields whose values name files or folders the build reads.
_READING = ("resources", "bases", "components", "patches", "patchesStrategicMerge", "patchesJson6902",
            "replacements", "crds", "configurations", "transformers", "generators", "validators")
_MAX_KUSTOMIZATIONS = 1000  # reached from one kustomization; a deeper web is refused, not followed forever


@dataclass(frozen=True)
class Kustomization:
    """One kustomization file as read: its folder, its text and documents, and what it names."""

    path: Path  # resolved
    text: str
    documents: list[Node]
    bases: tuple[Path, ...]  # kustomization files of the folders it names (resolved)
    files: tuple[Path, ...]  # files it names (resolved)
    remote: tuple[ScalarNode, ...]  # entries kustomize would fetch

    @property
    def folder(self) -> Path:
        return self.path.parent


@dataclass
class Graph:
    """A scan's kustomizations and everything each reaches."""

    read: dict[Path, Kustomization] = field(default_factory=dict)
    errors: dict[Path, str] = field(default_factory=dict)  # kustomizations that could not be read, why

    def tops(self, paths: Sequence[Path]) -> list[Path]:
        """The kustomizations of `paths` (resolved) no other of them reaches: the ones to build."""
        mine = [path.resolve() for path in paths]
        below = {reached for path in mine for reached in self.reached(path)[1:]}
        return [path for path in dict.fromkeys(mine) if path not in below]

    def reached(self, top: Path) -> list[Path]:
        """`top` and every kustomization it reaches, outermost first (breadth first), each once."""
        order = [top]
        seen = {top}
        for path in order:
            kustomization = self.kustomization(path)
            for base in kustomization.bases if kustomization is not None else ():
                if base not in seen and len(order) < _MAX_KUSTOMIZATIONS:
                    seen.add(base)
                    order.append(base)
        return order

    def members(self, top: Path) -> list[Path]:
        """Every file the build of `top` reads that pinguard knows of: kustomizations first, then what they name."""
        kustomizations = self.reached(top)
        files = [file for path in kustomizations if (k := self.kustomization(path)) is not None for file in k.files]
        return list(dict.fromkeys([*kustomizations, *files]))

    def kustomization(self, path: Path) -> Kustomization | None:
        """The kustomization at `path` (resolved), read once; None where it cannot be read (`errors` says why)."""
        if path not in self.read and path not in self.errors:
            try:
                self.read[path] = _read(path)
            except (UnreadableFile, SourceError) as exc:
                self.errors[path] = str(exc)
        return self.read.get(path)


def _read(path: Path) -> Kustomization:
    text = TextFile.read(path).text
    documents = compose(text)
    bases: list[Path] = []
    files: list[Path] = []
    remote: list[ScalarNode] = []
    for document in documents:
        remote.extend(node for node in remote_entries(document) if is_remote(str(node.value), path.parent))
        for value in _named(document):
            try:
                target = (path.parent / value).resolve()
            except (OSError, ValueError):  # no path at all (a NUL in it): kustomize refuses it, and says so
                continue
            if target.is_dir():
                bases.extend(found for name in NAMES if (found := target / name).is_file())
            elif target.is_file():
                files.append(target)
    return Kustomization(path, text, documents, tuple(bases), tuple(files), tuple(remote))


def _named(document: Node) -> Iterator[str]:
    """Every one-line string under the fields that name files: entries, and `path` values of patch entries."""
    if not isinstance(document, MappingNode):
        return
    for key, value in document.value:
        if isinstance(key, ScalarNode) and key.value in _READING:
            yield from _strings(value, 0)


def _strings(node: Node, depth: int) -> Iterator[str]:
    if isinstance(node, ScalarNode):
        text = str(node.value)
        if text and "\n" not in text and len(text) < 4096:
            yield text
    elif isinstance(node, SequenceNode) and depth < 2:
        for item in node.value:
            yield from _strings(item, depth + 1)
    elif isinstance(node, MappingNode) and depth < 3:
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == "path":
                yield from _strings(value, depth + 1)
