"""What rules share: the context they check against, and small helpers."""
from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, Node, SequenceNode

from pinguard.findings import Problem
from pinguard.lockfile import Lock, LockEntry, locked_key
from pinguard.provenance.model import Evidence
from pinguard.resolve import TagRules
from pinguard.sources.base import Found
from pinguard.sources.yamlnodes import mapping_get, scalar_text

Conf = Mapping[str, Any]


@dataclass(frozen=True)
class Context:
    lock: Lock
    lockfile: str  # as the user named it, for messages
    tag_rules: TagRules = field(default_factory=TagRules)

    def locked(self, found: Found) -> tuple[tuple[str, str] | None, LockEntry | None]:
        """The lock key a reference stands for (None: no tag to lock) and its entry (None: not locked)."""
        key = locked_key(found.reference) if found.reference is not None else None
        return key, self.lock.get(*key) if key is not None else None


def matches(value: str | None, patterns: list[str]) -> bool:
    """Whether a value matches one of the globs; no patterns: any value at all will do."""
    return value is not None and (not patterns or any(fnmatch.fnmatchcase(value, p) for p in patterns))


def evidence(found: Found, context: Context, repositories: list[str]) -> Evidence | Problem | None:
    """What the lock holds of a reference's provenance, when a provenance rule applies to it.

    None: the rule does not apply (no reference, another repository, not locked: `not-locked`
    says so). A Problem: nobody looked (`pinguard lock --provenance` records what it finds).
    """
    if found.reference is None or not matches(found.reference.name, repositories):
        return None
    _, entry = context.locked(found)
    if entry is None:
        return None
    if entry.evidence is None:
        return at(found, f"{spelled(found)}: provenance was never checked; run `pinguard lock --provenance`")
    return entry.evidence


_Judge = Callable[[Conf, Found, Evidence], Iterator[Problem]]
_Check = Callable[[Conf, Found, Context], Iterator[Problem]]


def judged_by_evidence(judge: _Judge) -> _Check:
    """A provenance rule's `check`: `judge` sees the recorded evidence of each reference the rule applies to."""
    def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
        recorded = evidence(found, context, conf["repositories"])
        if isinstance(recorded, Problem):
            yield recorded
        elif recorded is not None:
            yield from judge(conf, found, recorded)

    return check


def at(found: Found, message: str) -> Problem:
    return Problem(found.path, found.line, found.column, message, found.value)


def spelled(found: Found) -> str:
    """The reference as the user reads it: the value written, in backquotes."""
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
