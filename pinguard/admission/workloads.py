"""The kinds of object that hold pod specs, grouped by shape, and where in them the pod specs are.

A group is kinds whose pod specs sit at the same paths: each is one
ValidatingAdmissionPolicy (so the API server type-checks every expression against
every kind it matches) and the same paths serve the Kyverno rule. The built-in
groups cover core Pods (and their `ephemeralcontainers` subresource), the workload
controllers, CronJobs, KubeRay's RayCluster, RayJob, RayService and RayCronJob, and
Kubeflow's PyTorchJob; `--kind` adds a custom resource.

A path is field names joined by `.`; `name[]` goes through each item of a list and `*`
through each value of a map, at most once a path (CEL has no flatten on every API
server VAP supports): `spec.workerGroupSpecs[].template.spec`.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from pinguard.errors import PinguardError

EACH_ITEM, EACH_VALUE = "[]", "*"
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# CEL's reserved words, and names the API server's CEL escapes (`__x__`): a path through them is refused.
_RESERVED = frozenset("as break const continue else false for function if import in let loop namespace null package "
                      "return true var void while".split())
_GROUP = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+")
_VERSION = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
_PLURAL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


@dataclass(frozen=True)
class PodSpecPath:
    """Where pod specs are: `fields`, then through each item or value (`each`) of what they name, then `rest`."""

    fields: tuple[str, ...]
    each: str = ""  # "", EACH_ITEM or EACH_VALUE
    rest: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.each == EACH_ITEM:
            return ".".join((*self.fields[:-1], self.fields[-1] + EACH_ITEM, *self.rest))
        return ".".join((*self.fields, *((EACH_VALUE, *self.rest) if self.each else ())))


@dataclass(frozen=True)
class Resource:
    group: str  # "" for core
    version: str
    kind: str
    plural: str


@dataclass(frozen=True)
class KindGroup:
    """Kinds of one shape: their resources and the paths to their pod specs."""

    id: str  # part of object names: lowercase letters and digits
    resources: tuple[Resource, ...]
    paths: tuple[PodSpecPath, ...]
    subresources: tuple[str, ...] = ()  # of the first resource, judged too (`pods/ephemeralcontainers`)


def path(text: str) -> PodSpecPath:
    """A path as `--kind` writes it; a path no object can have is a usage error."""
    fields: list[str] = []
    rest: list[str] = []
    each = ""
    for part in text.split("."):
        name = part.removesuffix(EACH_ITEM)
        if part == EACH_VALUE or name != part:
            if each or not (fields or name != part):
                raise PinguardError(f"{text!r}: at most one `[]` or `*` a path, after a field")
            each = EACH_VALUE if part == EACH_VALUE else EACH_ITEM
            if part == EACH_VALUE:
                continue
        if not _FIELD.fullmatch(name) or name in _RESERVED or "__" in name:
            raise PinguardError(f"{text!r}: {part!r} is no field name a CEL expression can reach (letters, digits "
                                "and `_`, not a CEL reserved word)")
        (rest if each and name == part else fields).append(name)
    if not fields:
        raise PinguardError(f"{text!r}: no path to a pod spec")
    return PodSpecPath(tuple(fields), each, tuple(rest))


def _paths(*texts: str) -> tuple[PodSpecPath, ...]:
    return tuple(path(text) for text in texts)


def _ray_cluster(spec: str) -> tuple[str, ...]:
    """The pod specs of a RayClusterSpec at `spec`: the head's, each worker group's."""
    return f"{spec}.headGroupSpec.template.spec", f"{spec}.workerGroupSpecs[].template.spec"


def _ray_job(spec: str) -> tuple[str, ...]:
    """The pod specs of a RayJobSpec at `spec`: its cluster's and its submitter's."""
    return (*_ray_cluster(f"{spec}.rayClusterSpec"), f"{spec}.submitterPodTemplate.spec")


def _ray(kind: str, plural: str, *paths: str) -> KindGroup:
    return KindGroup(plural, (Resource("ray.io", "v1", kind, plural),), _paths(*paths))


BUILT_IN = (
    KindGroup("pods", (Resource("", "v1", "Pod", "pods"),), _paths("spec"), ("ephemeralcontainers",)),
    KindGroup("workloads", (Resource("apps", "v1", "Deployment", "deployments"),
                            Resource("apps", "v1", "StatefulSet", "statefulsets"),
                            Resource("apps", "v1", "DaemonSet", "daemonsets"),
                            Resource("apps", "v1", "ReplicaSet", "replicasets"),
                            Resource("batch", "v1", "Job", "jobs"),
                            Resource("", "v1", "ReplicationController", "replicationcontrollers")),
              _paths("spec.template.spec")),
    KindGroup("cronjobs", (Resource("batch", "v1", "CronJob", "cronjobs"),),
              _paths("spec.jobTemplate.spec.template.spec")),
    _ray("RayCluster", "rayclusters", *_ray_cluster("spec")),
    _ray("RayJob", "rayjobs", *_ray_job("spec")),
    _ray("RayService", "rayservices", *_ray_cluster("spec.rayClusterConfig")),
    _ray("RayCronJob", "raycronjobs", *_ray_job("spec.jobTemplate")),
    KindGroup("pytorchjobs", (Resource("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs"),),
              _paths("spec.pytorchReplicaSpecs.*.template.spec")),
)


def custom(specs: Iterable[str]) -> tuple[KindGroup, ...]:
    """The groups of `--kind GROUP/VERSION/KIND[/PLURAL]:PATH[,PATH...]`, once each; a bad one is a usage error."""
    groups: dict[tuple[str, str], KindGroup] = {}
    known = {(r.group, r.kind) for group in BUILT_IN for r in group.resources}
    for spec in specs:
        try:
            group = _custom(spec)
        except PinguardError as exc:
            raise PinguardError(f"--kind {spec!r}: {exc}") from None
        resource = group.resources[0]
        if (resource.group, resource.kind) in known | set(groups):
            raise PinguardError(f"--kind {spec!r}: {resource.kind} of {resource.group} is already judged")
        groups[resource.group, resource.kind] = group
    return tuple(groups[key] for key in sorted(groups))


def _custom(spec: str) -> KindGroup:
    kind_part, colon, paths_part = spec.partition(":")
    words = kind_part.split("/")
    if not colon or len(words) not in (3, 4):
        raise PinguardError("not GROUP/VERSION/KIND[/PLURAL]:PATH[,PATH...], e.g. "
                            "'example.com/v1/TrainRun:spec.template.spec'")
    group, version, kind = words[:3]
    plural = words[3] if len(words) == 4 else _plural(kind)
    for what, value, pattern in (("group", group, _GROUP), ("version", version, _VERSION), ("kind", kind, _KIND),
                                 ("plural", plural, _PLURAL)):
        if not pattern.fullmatch(value):
            raise PinguardError(f"{value!r} is no API {what} (a custom resource's group has a dot)")
    paths = tuple(dict.fromkeys(path(text) for text in paths_part.split(",")))
    digest = hashlib.sha256(f"{group}/{version}/{kind}/{plural}".encode()).hexdigest()[:8]
    return KindGroup(f"{kind.lower()}{digest}", (Resource(group, version, kind, plural),), paths)


def _plural(kind: str) -> str:
    """The resource a kind is served as, guessed as kubectl guesses it (its CRD names it: give it when it differs)."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"
