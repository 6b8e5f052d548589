"""What pods report against the lock: the digest each container runs, and whether the lock vouches for it.

Pods are the JSON the API serves (`metadata`, `spec`, `status`), so `run`'s watch and
`audit` judge them alike. A container the lock does not vouch for may still be a
sidecar the policy allows (`sidecars:` entries, globs on its name and image): a
service-mesh proxy or a secrets agent injected into the pod by a webhook. It is
reported as allowed, never confirmed as locked; and a container the manifest itself
declares is never excused so, nor is an ephemeral container (`kubectl debug` adds one
to a running pod, on any image: no webhook injects it). Init and ephemeral containers
are judged as the others are. The standard library and pinguard's own modules only.
"""
from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pinguard.errors import InvalidReference
from pinguard.launch.guards import image_id_digest
from pinguard.lock.locked import find
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.policy.model import Sidecar
from pinguard.reference import Reference, parse

UNPINNED = "unpinned"
NOT_LOCKED = "not-locked"
NOT_ALLOWED = "sidecar-not-allowed"  # a container the manifest does not declare, in neither the lock nor the policy
ALLOWED = "allowed-sidecar"


CONTAINER, INIT, EPHEMERAL = "container", "init container", "ephemeral container"
# Where a pod lists each kind of container and the status of each: (spec key, status key, kind).
_KINDS = (("initContainers", "initContainerStatuses", INIT), ("containers", "containerStatuses", CONTAINER),
          ("ephemeralContainers", "ephemeralContainerStatuses", EPHEMERAL))


class Container(NamedTuple):
    name: str
    image: str  # as the pod spec names it
    image_id: str  # as the kubelet reports it; empty before the container was created
    kind: str  # CONTAINER, INIT or EPHEMERAL


@dataclass(frozen=True)
class Report:
    """One container whose image the lock does not vouch for, with the evidence."""

    namespace: str
    pod: str
    container: str
    image: str  # as the pod spec names it
    image_id: str  # as the kubelet reports it; empty before the container was created
    problem: str  # UNPINNED, NOT_LOCKED, NOT_ALLOWED, or ALLOWED for a sidecar the policy lets run
    message: str
    kind: str = CONTAINER  # CONTAINER, INIT or EPHEMERAL

    def to_json(self) -> dict[str, str]:
        return {"namespace": self.namespace, "pod": self.pod, "container": self.container, "kind": self.kind,
                "image": self.image, "image_id": self.image_id, "problem": self.problem, "message": self.message}

    def __str__(self) -> str:
        return f"{self.namespace}/{self.pod} {self.kind} {self.container}: {self.message} [{self.problem}]"


class Judged(NamedTuple):
    """A pod's containers the lock does not vouch for: those that stop a job, and sidecars the policy allows."""

    problems: list[Report]
    allowed: list[Report]


def containers(pod: Mapping[str, Any]) -> Iterator[Container]:
    """Every init, regular and ephemeral container of a pod, each with the imageID its status reports."""
    spec, status = _mapping(pod, "spec"), _mapping(pod, "status")
    for spec_key, status_key, kind in _KINDS:
        image_ids = {s.get("name"): str(s.get("imageID") or "") for s in _mappings(status, status_key)}
        for container in _mappings(spec, spec_key):
            name = str(container.get("name", ""))
            yield Container(name, str(container.get("image", "")), image_ids.get(name, ""), kind)


def _mapping(parent: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, Mapping) else {}


def _mappings(parent: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = parent.get(key)
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def started(pod: Mapping[str, Any]) -> bool:
    """Whether every container of the pod has reported the image it runs."""
    return all(container.image_id for container in containers(pod))


def judge(pod: Mapping[str, Any], lock: Lock, sidecars: Sequence[Sidecar] = (),
          declared: Collection[str] | None = None) -> Judged:
    """The containers of a pod that are not pinned, or run a digest the lock does not hold for their image.

    The image with the digest it runs is judged as every command judges a reference
    (`pinguard.lock.locked`): a digest of one of the locked index's platform images counts,
    as some runtimes report the manifest they pulled for their platform, not the index. A
    container one of `sidecars` matches is allowed instead, unless `declared` (the
    container names of the manifest `run` launched) names it; one it does not name and
    no entry allows gets one more report, saying how to allow it. Without `declared`
    (`audit`), any container but an ephemeral one may be allowed.
    """
    metadata = _mapping(pod, "metadata")
    namespace, pod_name = str(metadata.get("namespace", "")), str(metadata.get("name", ""))
    judged = Judged([], [])
    for name, image, image_id, kind in containers(pod):
        reports = [Report(namespace, pod_name, name, image, image_id, problem, message, kind)
                   for problem, message in _unlocked(image, image_id, lock)]
        if not reports or kind == EPHEMERAL or (declared is not None and name in declared):
            judged.problems.extend(reports)
            continue
        entry = next((sidecar for sidecar in sidecars if sidecar.allows(name, image)), None)
        if entry is not None:
            runs = f"runs {image_id}" if image_id else "has not started"
            judged.allowed.append(Report(namespace, pod_name, name, image, image_id, ALLOWED,
                                         f"allowed by policy (sidecars entry {entry}): image `{image}` {runs}, "
                                         "which the lock does not vouch for", kind))
            continue
        judged.problems.extend(reports)
        if declared is not None:
            judged.problems.append(Report(namespace, pod_name, name, image, image_id, NOT_ALLOWED,
                                          _how_to_allow(name, image, sidecars), kind))
    return judged


def _unlocked(image: str, image_id: str, lock: Lock) -> list[tuple[str, str]]:
    """(problem, message) for an image not pinned, and for one running a digest the lock does not hold for it."""
    try:
        reference: Reference | None = parse(image)
    except InvalidReference:
        reference = None
    found = []
    if reference is None or reference.digest is None:
        found.append((UNPINNED, f"image `{image}` is not pinned to a digest"))
    if not image_id:
        return found  # not created yet: nothing runs to compare
    if reference is None or not runs_locked(lock, reference, image_id_digest(image_id)):
        entries = _entries(lock, reference) if reference is not None else []
        locked = (f"the lock holds {', '.join(sorted(e.digest for e in entries))}" if entries
                  else "the lock has no entry for it")
        found.append((NOT_LOCKED, f"image `{image}` runs {image_id}; {locked}"))
    return found


def runs_locked(lock: Lock, reference: Reference, running: str | None) -> bool:
    """Whether an image runs a digest the lock holds for it: `reference` with the digest it runs is locked
    (`pinguard.lock.locked`): held by its tag's entry, or untagged by an entry of its name."""
    try:
        return running is not None and find(lock, reference.with_digest(running)).locked
    except InvalidReference:  # a runtime's digest no reference may hold (another algorithm)
        return False


def _entries(lock: Lock, reference: Reference) -> list[LockEntry]:
    """The entries a message names: its tag's, or every entry of its name when it has no tag."""
    if reference.tag is not None:
        entry = lock.get(reference.name, reference.tag)
        return [entry] if entry is not None else []
    return list(lock.of_name(reference.name))


def _how_to_allow(container: str, image: str, sidecars: Sequence[Sidecar]) -> str:
    """Why a container the manifest does not declare stops the job, and the policy entry that would let it run."""
    near = [str(sidecar.image) for sidecar in sidecars if sidecar.image and sidecar.allows_name(container)]
    if near:
        return (f"not in the manifest, and the policy allows a sidecar named `{container}` only with image "
                f"{' or '.join(f'`{glob}`' for glob in near)}")
    try:
        reference = parse(image)
    except InvalidReference:
        glob = image
    else:
        glob = reference.name if reference.digest and not reference.tag else f"{reference.name}:*"
    entry = Sidecar(container, glob)
    return (f"not in the manifest (injected into the pod?): lock its image, or allow it in the policy `run` "
            f"uses (--policy FILE): `sidecars: [{entry}]`")
