"""The object `pinguard run` submits: the manifest's RayJob or RayCluster, every image at its locked digest, marked.

Images are pinned with `pin`'s own plan on the manifest text (so `runtimeEnvYAML`'s
`image_uri` is too), then the object is read and marked: annotations
`pinguard.dev/lock-sha256` (of the lockfile) and `pinguard.dev/expected-image` (the
locked `name:tag@digest` of the Ray container) on the object and on each pod template,
and on every container of the head, worker and submitter pod templates the env vars
PINGUARD_EXPECTED_DIGEST (that container's locked digest), PINGUARD_LOCK_SHA256,
PINGUARD_CONTAINER, and POD_NAME and POD_NAMESPACE through the downward API: what the
in-pod guard (`guards.check_own_image`) needs to find its own pod and judge it.

A RayCluster has no entrypoint: it is read from the annotation `pinguard.dev/entrypoint`,
and the runtime_env from the annotation `runtimeEnvYAML`, KubeRay's name for it on a
RayJob, so that `check` and `pin` treat it there exactly as on a RayJob.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from pinguard.errors import InvalidReference, PinguardError
from pinguard.launch.gate import Gated
from pinguard.lock.locked import find
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.pin.plan import plan_pins
from pinguard.reference import parse
from pinguard.scan.paths import Scan

GROUP = "ray.io"
PLURALS = {"RayJob": "rayjobs", "RayCluster": "rayclusters"}
LOCK_ANNOTATION = "pinguard.dev/lock-sha256"
IMAGE_ANNOTATION = "pinguard.dev/expected-image"
ENTRYPOINT_ANNOTATION = "pinguard.dev/entrypoint"
RUNTIME_ENV_ANNOTATION = "runtimeEnvYAML"
K8S_JOB_MODE = "K8sJobMode"  # RayJob spec.submissionMode: a batch/v1 Job's pod runs `ray job submit`
_DOWNWARD = {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"}


@dataclass(frozen=True)
class Job:
    """The rendered object, as the API receives it."""

    body: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.body["kind"])

    @property
    def plural(self) -> str:
        return PLURALS[self.kind]

    @property
    def version(self) -> str:
        return str(self.body["apiVersion"]).partition("/")[2]

    @property
    def name(self) -> str:
        return str(self.body.get("metadata", {}).get("name", ""))

    @property
    def namespace(self) -> str | None:
        namespace = self.body.get("metadata", {}).get("namespace")
        return str(namespace) if namespace else None

    @property
    def annotations(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in (self.body.get("metadata", {}).get("annotations") or {}).items()}

    def entrypoint(self) -> str:
        spec = self.body.get("spec") or {}
        entrypoint = spec.get("entrypoint") if self.kind == "RayJob" else self.annotations.get(ENTRYPOINT_ANNOTATION)
        if not entrypoint:
            where = "spec.entrypoint" if self.kind == "RayJob" else f"the annotation {ENTRYPOINT_ANNOTATION}"
            raise PinguardError(f"{self.kind} {self.name}: no entrypoint: set {where}")
        return str(entrypoint)

    def runtime_env(self) -> dict[str, Any] | None:
        """A RayCluster's runtime_env for the job submitted to it (a RayJob's is KubeRay's business)."""
        text = self.annotations.get(RUNTIME_ENV_ANNOTATION)
        try:
            env = yaml.safe_load(text) if text else None
        except yaml.YAMLError as exc:
            env = exc
        except RecursionError:
            raise PinguardError(f"{self.kind} {self.name}: annotation {RUNTIME_ENV_ANNOTATION}: nested too "
                                "deeply") from None
        if env is not None and not isinstance(env, dict):
            raise PinguardError(f"{self.kind} {self.name}: annotation {RUNTIME_ENV_ANNOTATION}: expected a YAML "
                                f"mapping{f' ({env})' if isinstance(env, yaml.YAMLError) else ''}")
        return env

    def cluster_spec(self) -> dict[str, Any]:
        spec = self.body.get("spec") or {}
        return (spec if self.kind == "RayCluster" else spec.get("rayClusterSpec")) or {}

    def pod_templates(self) -> list[dict[str, Any]]:
        """The manifest's pod templates: the head's first (empty without one), the workers', the submitter's."""
        cluster = self.cluster_spec()
        groups = [cluster.get("headGroupSpec") or {}, *(cluster.get("workerGroupSpecs") or [])]
        submitter = (self.body.get("spec") or {}).get("submitterPodTemplate") if self.kind == "RayJob" else None
        return [group.get("template") or {} for group in groups] + ([submitter] if submitter else [])

    @property
    def submits_with_a_pod(self) -> bool:
        """Whether KubeRay submits the entrypoint from a pod of its own: a RayJob in K8sJobMode, the default."""
        mode = (self.body.get("spec") or {}).get("submissionMode") or K8S_JOB_MODE
        return self.kind == "RayJob" and mode == K8S_JOB_MODE

    def expected_pods(self) -> int:
        """The pods KubeRay starts for the job.

        The head and every worker of the cluster spec (none when a RayJob selects a
        running cluster), and the submitter pod when there is one.
        """
        cluster = self.cluster_spec()
        groups = cluster.get("workerGroupSpecs") or []
        workers = sum(int(g.get("replicas", g.get("minReplicas", 0))) * int(g.get("numOfHosts", 1)) for g in groups)
        return (1 + workers if cluster else 0) + int(self.submits_with_a_pod)

    def yaml(self) -> str:
        return yaml.dump(self.body, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (an entrypoint script, runtimeEnvYAML) as block scalars, the way people write them."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _string)


def render(gated: Gated, namespace: str | None) -> Job:
    """The job to submit; a PinguardError unless the manifest is one RayJob or RayCluster of locked images."""
    manifest = gated.manifest
    path = manifest.file.path.as_posix()
    changes, missing, _, _ = plan_pins(Scan([manifest]), gated.lock)
    unlocked = [f for f in manifest.found if f.reference is None] + missing  # the gate's findings were suppressed
    if unlocked:
        raise PinguardError(f"{path}:{unlocked[0].line}:{unlocked[0].column}: `{unlocked[0].value}` is not a locked "
                            "image: `pinguard run` launches only what the lock holds")
    text = changes[0][1] if changes else manifest.file.text
    try:
        documents = [document for document in yaml.safe_load_all(text) if document is not None]
    except yaml.YAMLError as exc:  # what the scan's parser accepts but no object can hold (a list as a key)
        raise PinguardError(f"{path}: {exc}") from None
    except RecursionError:  # the pure-Python loader recurses per level, where the scan's libyaml did not
        raise PinguardError(f"{path}: nested too deeply") from None
    kinds = [d.get("kind") if isinstance(d, dict) else None for d in documents]
    if len(documents) != 1 or kinds[0] not in PLURALS or not str(documents[0].get("apiVersion")).startswith(
            GROUP + "/"):
        raise PinguardError(f"{path}: `pinguard run` launches one ray.io RayJob or RayCluster, found "
                            f"{', '.join(str(k) for k in kinds) or 'nothing'}; apply other objects with kubectl first")
    job = Job(documents[0])
    if job.kind == "RayCluster":  # what `run` submits to it later: wrong now rather than after the cluster is up
        job.entrypoint()
        job.runtime_env()
    metadata = job.body.setdefault("metadata", {})
    if namespace is not None:
        if job.namespace not in (None, namespace):
            raise PinguardError(f"{path}: the manifest's namespace {job.namespace} is not --namespace {namespace}")
        metadata["namespace"] = namespace
    images = [_mark(template, gated.lock, gated.lock_sha256, path) for template in job.pod_templates()]
    metadata["annotations"] = {**(metadata.get("annotations") or {}), LOCK_ANNOTATION: gated.lock_sha256,
                               **({IMAGE_ANNOTATION: images[0]} if images and images[0] else {})}
    return job


def _mark(template: dict[str, Any], lock: Lock, lock_sha256: str, path: str) -> str | None:
    """Mark one pod template; the locked image of its Ray container (the first), None when it has none."""
    spec = template.get("spec") or {}
    for container in spec.get("initContainers") or []:
        _mark_container(container, lock, lock_sha256, path)
    images = [_mark_container(container, lock, lock_sha256, path) for container in spec.get("containers") or []]
    if not images:
        return None
    metadata = template.setdefault("metadata", {})
    metadata["annotations"] = {**(metadata.get("annotations") or {}), LOCK_ANNOTATION: lock_sha256,
                               IMAGE_ANNOTATION: images[0]}
    return images[0]


def _mark_container(container: dict[str, Any], lock: Lock, lock_sha256: str, path: str) -> str:
    """Give a container the env the in-pod guard reads (replacing any it had); its locked `name:tag@digest`."""
    entry, digest = _entry(str(container.get("image", "")), lock, path)
    ours: list[dict[str, Any]] = [{"name": "PINGUARD_EXPECTED_DIGEST", "value": digest},
            {"name": "PINGUARD_LOCK_SHA256", "value": lock_sha256},
            {"name": "PINGUARD_CONTAINER", "value": str(container.get("name", ""))},
            *({"name": name, "valueFrom": {"fieldRef": {"fieldPath": field}}} for name, field in _DOWNWARD.items())]
    names = {item["name"] for item in ours}
    container["env"] = [e for e in container.get("env") or [] if e.get("name") not in names] + ours
    return f"{entry.name}:{entry.tag}@{digest}"


def _entry(image: str, lock: Lock, path: str) -> tuple[LockEntry, str]:
    """The lock entry a pinned image stands for, and the digest it is pinned to: the entry's or a platform
    image's (`pinguard.lock.locked`, as the gate judged it)."""
    try:
        reference = parse(image)
    except InvalidReference as exc:
        raise PinguardError(f"{path}: {exc}") from None
    locked = find(lock, reference)
    if reference.digest is not None and locked.locked and locked.entry is not None:
        return locked.entry, reference.digest
    raise PinguardError(f"{path}: `{image}` is not a locked image: `pinguard run` launches only what the lock holds")
