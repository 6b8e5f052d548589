"""What rules share: the context they check against, and small helpers."""
from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from yaml.nodes import MappingNode, Node, SequenceNode

from pinguard.findings import Problem
from pinguard.lock.locked import Locked, find
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.provenance.evidence import Evidence
from pinguard.resolve.tags import TagRules
from pinguard.sources import kinds
from pinguard.sources.base import Found
from pinguard.sources.yamlnodes import mapping_get, scalar_text

Conf = Mapping[str, Any]


@dataclass(frozen=True)
class Context:
    lock: Lock
    lockfile: str  # as the user named it, for messages
    tag_rules: TagRules = field(default_factory=TagRules)
    # What a rule derives from the lock once a run, by the rule's ID (a run checks every file with one Context).
    derived: dict[str, Any] = field(default_factory=dict, compare=False)

    def locked(self, found: Found) -> Locked | None:
        """What the lock says of a reference (`pinguard.lock.locked`, as every command judges it); None: none."""
        return find(self.lock, found.reference) if found.reference is not None else None


def matches(value: str | None, patterns: list[str]) -> bool:
    """Whether a value matches one of the globs; no patterns: anything will do, no value too."""
    return not patterns or listed(value, patterns)


def listed(value: str | None, patterns: list[str]) -> bool:
    """Whether a value matches one of the globs; no patterns: no value does."""
    return value is not None and any(fnmatch.fnmatchcase(value, p) for p in patterns)


def locked_with_evidence(found: Found, context: Context, repositories: list[str]) -> LockEntry | Problem | None:
    """The lock entry of a reference, with its provenance, when a provenance rule applies to it.

    The entry is the one `pinguard.lock.locked` finds: its tag's, or for a digest without a
    tag, the entry of its name holding that digest. None: the rule does not apply (no
    reference, another repository, not locked: `not-locked` says so). A Problem: nobody
    looked (`pinguard lock --provenance` records what it finds).
    """
    if found.reference is None or not matches(found.reference.name, repositories):
        return None
    locked = context.locked(found)
    entry = locked.entry if locked is not None else None
    if entry is None:
        return None
    if entry.evidence is None:
        return at(found, f"{spelled(found)}: provenance was never checked; run `pinguard lock --provenance`")
    return entry


@dataclass(frozen=True)
class Subject:
    """An image a provenance rule wants evidence about: one platform's, or the index itself."""

    name: str  # "the linux/amd64 image", "the index"
    digest: str


def subjects(entry: LockEntry, require_index: bool) -> list[Subject]:
    """What evidence must be about: every platform image the entry records, and its index (or only
    manifest) too with `require_index`, or when it records no platform at all."""
    wanted = [Subject(f"the {platform} image", digest) for platform, digest in sorted(entry.platforms.items())]
    if (require_index or not wanted) and entry.digest not in {subject.digest for subject in wanted}:
        wanted.append(Subject("the index", entry.digest))
    return wanted


def covers(about: str | None, subject: Subject, entry: LockEntry) -> bool:
    """Whether evidence about the digest `about` vouches for `subject`: it is about that very image, or about
    the locked index, which names each platform image by its digest. Evidence about nothing recorded covers none."""
    return about is not None and about in (subject.digest, entry.digest)


def uncovered(entry: LockEntry, require_index: bool, about: Iterable[str | None]) -> list[Subject]:
    """The subjects (`subjects`) that no evidence about the digests `about` covers."""
    digests = set(about)
    return [subject for subject in subjects(entry, require_index)
            if not any(covers(digest, subject, entry) for digest in digests)]


def named(wanted: Iterable[Subject]) -> str:
    return ", ".join(subject.name for subject in wanted)


def unread(recorded: Evidence) -> str:
    """What a finding adds when the search stopped at its byte budget."""
    return f" (the search stopped early: {recorded.unread})" if recorded.unread else ""


_Judge = Callable[[Conf, Found, LockEntry, Evidence], Iterator[Problem]]
_Check = Callable[[Conf, Found, Context], Iterator[Problem]]


def judged_by_evidence(judge: _Judge) -> _Check:
    """A provenance rule's `check`: `judge` sees the lock entry, and its recorded evidence, of each
    reference the rule applies to."""
    def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
        entry = locked_with_evidence(found, context, conf["repositories"])
        if isinstance(entry, Problem):
            yield entry
        elif entry is not None and entry.evidence is not None:
            yield from judge(conf, found, entry, entry.evidence)

    return check


class _Written(Protocol):
    """What a finding points at: a value written at a place of a file (a `Found`, an `ActionUse`)."""

    @property
    def path(self) -> str: ...

    @property
    def value(self) -> str: ...

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...


def at(found: _Written, message: str) -> Problem:
    return Problem(found.path, found.line, found.column, message, found.value)


def spelled(found: Found) -> str:
    """The reference as the user reads it: the value written, in backquotes; what a chart renders (or a
    kustomization builds), said so."""
    if found.rendered is not None and found.source == kinds.KUSTOMIZE:
        return f"`{found.rendered}` (as kustomize builds it)"
    if found.rendered is not None:
        return f"`{found.rendered}` (as the chart renders it)"
    return f"`{found.value}`"


# Where each kind of Ray document keeps its RayClusterSpec.
_CLUSTER_PATHS = {
    "RayCluster": ("spec",),
    "RayJob": ("spec", "rayClusterSpec"),
    "RayService": ("spec", "rayClusterConfig"),
    "RayCronJob": ("spec", "jobTemplate", "rayClusterSpec"),
}


def cluster_spec(document: Node) -> MappingNode | None:
    """The RayClusterSpec of a Ray document (RayCluster, RayJob, RayService, RayCronJob), else None."""
    path = _CLUSTER_PATHS.get(scalar_text(get(document, "kind")) or "")
    node = get(document, *path) if path else None
    return node if isinstance(node, MappingNode) else None


def containers(group: Node) -> list[MappingNode]:
    """The containers of a head or worker group's pod template; KubeRay runs Ray in the first."""
    return [c for c in items(get(group, "template", "spec", "containers")) if isinstance(c, MappingNode)]


def get(node: Node | None, *keys: str) -> Node | None:
    """The value at a path of mapping keys, merge keys followed; None where the path stops."""
    for key in keys:
        node = mapping_get(node, key) if node is not None else None
    return node


def items(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []
