"""Kustomizations read from their builds where kustomize is at hand.

Every kustomization of a scan that no other one of the scan reaches is built
(graph.py); the files its build reads (its kustomizations, resources and patch
files) are not read as text: every image of the build (containers, init and
ephemeral containers, any `image` key of any object) is found as a Kubernetes
manifest's are and reported at the line that controls it (trace.py), or at the
kustomization built where that line lies outside the scan or nowhere. A
kustomization that reaches a remote resource is not built; one kustomize refuses
is read as text, with that said, as without kustomize: what the text does not
say is `needs-kustomize`'s.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pinguard.kustomize.binary import BuildFailed, Kustomize, locate
from pinguard.kustomize.builds import Builder
from pinguard.kustomize.graph import Graph
from pinguard.kustomize.settings import KustomizeSettings
from pinguard.kustomize.trace import Inputs, Trace
from pinguard.read.files import TextFile, UnreadableFile
from pinguard.reference import parse
from pinguard.sources import kinds, kubernetes
from pinguard.sources.base import FILE_START, Found, SourceError
from pinguard.sources.yamlnodes import Located

SOURCE = kinds.KUSTOMIZE


@dataclass(eq=False)
class Built:
    """One kustomization as its build shows it."""

    top: Path  # the kustomization file built (resolved)
    builder: Builder
    folders: list[Path]  # every kustomization folder the build reaches (resolved)
    members: frozenset[Path]  # every file it reads that pinguard knows of (resolved)
    scanned: frozenset[Path]  # the files of the scan (resolved): only they are pinned
    traces: dict[str, Trace] = field(default_factory=dict)  # by image as built
    found: dict[Path, list[Found]] = field(default_factory=dict)  # by resolved path
    texts: dict[Path, str] = field(default_factory=dict)  # every file it reads, by resolved path
    failure: str | None = None  # why it was not built: read as text then, never pinned

    def judges(self, path: Path) -> bool:
        """Whether `path` is read from the build, not as text: never where it was not built."""
        return self.failure is None and path.resolve() in self.members

    def build(self, edited: Mapping[Path, str] | None = None) -> str:
        return self.builder.build(self.top, self.folders, edited)


@dataclass(frozen=True, eq=False)
class Builds:
    """The builds that read one file (two overlays of one base both read it)."""

    each: tuple[Built, ...]

    def judges(self, path: Path) -> bool:
        """Whether `path` is read from the builds, not as text: only where every build that reads it was made."""
        return all(built.judges(path) for built in self.each)

    def of(self, found: Found) -> Built | None:
        """The build a finding came from."""
        return next((built for built in self.each if found.rendered in built.traces), None)


class Judge:
    """Builds each kustomization once per run; `owners` says which builds read a file."""

    def __init__(self, settings: KustomizeSettings, env: Mapping[str, str], kustomizations: Sequence[Path],
                 scanned: Sequence[Path]) -> None:
        self._settings = settings
        self._env = env
        self._kustomizations = kustomizations
        self._scanned = frozenset(path.resolve() for path in scanned)
        self._binary: Kustomize | None = None
        self._owners: dict[Path, list[Path]] | None = None  # each file read by a build, and the tops that build it
        self._graph = Graph()
        self._built: dict[Path, Built] = {}

    def owners(self, path: Path) -> Builds | None:
        """The builds that read `path`; None without kustomize, or where no kustomization of the scan reads it."""
        if self._owners is None:
            self._binary = locate(self._settings.binary, self._env, self._settings.cache_dir)
            self._owners = {}
            if self._binary is not None:
                for top in self._graph.tops([found.resolve() for found in self._kustomizations]):
                    for member in self._graph.members(top):
                        self._owners.setdefault(member, []).append(top)
        tops = self._owners.get(path.resolve())
        if not tops or self._binary is None:
            return None
        for top in tops:
            if top not in self._built:
                self._built[top] = self._judge(top, self._binary)
        return Builds(tuple(self._built[top] for top in tops))

    def _judge(self, top: Path, binary: Kustomize) -> Built:
        graph = self._graph
        reached = graph.reached(top)
        built = Built(top, Builder(binary, self._settings.cache_dir, self._env),
                      sorted({path.parent for path in reached}), frozenset(graph.members(top)), self._scanned)
        try:
            _read_build(built, graph, reached)
        except (BuildFailed, SourceError, UnreadableFile) as exc:
            built.failure = f"kustomize cannot build it ({exc}); read as text, as without kustomize"
            built.found.clear()
        return built


def _read_build(built: Built, graph: Graph, reached: list[Path]) -> None:
    kustomizations = []
    for path in reached:
        kustomization = graph.kustomization(path)
        if kustomization is None:
            raise BuildFailed(f"{path}: {graph.errors.get(path)}")
        if kustomization.remote:
            node = kustomization.remote[0]
            raise BuildFailed(f"{path.name} line {node.start_mark.line + 1} names the remote resource {node.value!r}, "
                              "which pinguard never fetches")
        kustomizations.append((path, kustomization.text, kustomization.documents))
        built.texts[path] = kustomization.text
    files = []
    for path in built.members:
        if path not in built.texts:
            built.texts[path] = TextFile.read(path).text
            files.append((path, built.texts[path]))
    inputs = Inputs(kustomizations, files, built.scanned)
    images = kubernetes.find("<build>", built.build()).found
    for item in images:
        if item.reference is None:
            raise BuildFailed(f"it builds the image {item.value!r}, which is no reference: {item.problem}")
    for image in dict.fromkeys(item.value for item in images):
        trace = built.traces[image] = inputs.trace(image)
        found = _found(built, image, trace)
        built.found.setdefault(Path(found.path), []).append(found)
    for path in built.members:
        built.found.setdefault(path, []).sort(key=lambda item: item.span.start)


def _found(built: Built, image: str, trace: Trace) -> Found:
    reference = parse(image)
    if trace.tag is not None and reference.digest is not None:
        # kustomize writes `name@digest` for an entry's digest: the lock entry is the tag's the files name.
        reference = parse(f"{image.partition('@')[0]}:{trace.tag}@{reference.digest}")
    if trace.entry is not None and trace.entry.path in built.scanned:
        where = trace.entry.where
        start, end = trace.entry.span()
    elif trace.written is not None and trace.written.path in built.scanned:
        where, start, end = trace.written.where, trace.written.start, trace.written.end
    else:  # made from pieces, or written outside the scan: the kustomization built answers for it
        where, start, end = Located(built.texts[built.top], built.top.as_posix(), SOURCE), 0, 0
    return Found(where.path, SOURCE, where.span(start, end), where.text[start:end], reference, rendered=image)


def found_in(builds: Builds, path: Path) -> list[Found]:
    """What a file the builds `judge` holds, as they show it, under the path the scan names it by: each image
    at each place once, whichever build showed it first."""
    unique: dict[tuple[int, int, str | None], Found] = {}
    for built in builds.each:
        for item in built.found.get(path.resolve(), []):
            unique.setdefault((item.span.start, item.span.end, item.rendered), replace(item, path=path.as_posix()))
    return sorted(unique.values(), key=lambda item: item.span.start)


def failure_notice(builds: Builds, path: Path) -> list[Found]:
    """For a kustomization kustomize did not build, the finding that says so; else nothing."""
    return [Found(path.as_posix(), SOURCE, FILE_START, "", None, built.failure)
            for built in builds.each if built.failure is not None and path.resolve() == built.top]

