"""What pods report against the lock: the digest each container runs, and whether the lock vouches for it.

Pods are the JSON the API serves (`metadata`, `spec`, `status`), so `run`'s watch and
`audit` judge them alike. The standard library and pinguard's own modules only.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pinguard.errors import InvalidReference
from pinguard.launch.guards import image_id_digest
from pinguard.lockfile import Lock, LockEntry
from pinguard.reference import Reference, parse

UNPINNED = "unpinned"
NOT_LOCKED = "not-locked"


@dataclass(frozen=True)
class Report:
    """One container whose image the lock does not vouch for, with the evidence."""

    namespace: str
    pod: str
    container: str
    image: str  # as the pod spec names it
    image_id: str  # as the kubelet reports it; empty before the container was created
    problem: str  # UNPINNED or NOT_LOCKED
    message: str

    def to_json(self) -> dict[str, str]:
        return {"namespace": self.namespace, "pod": self.pod, "container": self.container, "image": self.image,
                "image_id": self.image_id, "problem": self.problem, "message": self.message}

    def __str__(self) -> str:
        return f"{self.namespace}/{self.pod} container {self.container}: {self.message} [{self.problem}]"


def locked_entries(lock: Lock, reference: Reference) -> list[LockEntry]:
    """The entries a reference may run: its name and tag, or every entry of its name when it has no tag."""
    if reference.tag is not None:
        entry = lock.get(reference.name, reference.tag)
        return [entry] if entry is not None else []
    return [entry for entry in lock if entry.name == reference.name]


def containers(pod: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(name, image, imageID) of every container and init container of a pod."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    image_ids = {s.get("name"): str(s.get("imageID") or "")
                 for key in ("initContainerStatuses", "containerStatuses") for s in status.get(key) or []}
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            name = str(container.get("name", ""))
            yield name, str(container.get("image", "")), image_ids.get(name, "")


def started(pod: Mapping[str, Any]) -> bool:
    """Whether every container of the pod has reported the image it runs."""
    return all(image_id for _, _, image_id in containers(pod))


def judge(pod: Mapping[str, Any], lock: Lock) -> list[Report]:
    """The containers of a pod that are not pinned, or run a digest the lock does not hold for their image.

    A digest of one of the locked index's platform images counts as locked: some
    runtimes report the manifest they pulled for their platform, not the index.
    """
    metadata = pod.get("metadata") or {}
    namespace, pod_name = str(metadata.get("namespace", "")), str(metadata.get("name", ""))
    reports: list[Report] = []
    for name, image, image_id in containers(pod):
        try:
            reference: Reference | None = parse(image)
        except InvalidReference:
            reference = None
        if reference is None or reference.digest is None:
            reports.append(Report(namespace, pod_name, name, image, image_id, UNPINNED,
                                  f"image `{image}` is not pinned to a digest"))
        if not image_id:
            continue  # not created yet: nothing runs to compare
        entries = locked_entries(lock, reference) if reference is not None else []
        allowed = {digest for entry in entries for digest in (entry.digest, *entry.platforms.values())}
        if image_id_digest(image_id) not in allowed:
            locked = (f"the lock holds {', '.join(sorted(e.digest for e in entries))}" if entries
                      else "the lock has no entry for it")
            reports.append(Report(namespace, pod_name, name, image, image_id, NOT_LOCKED,
                                  f"image `{image}` runs {image_id}; {locked}"))
    return reports
