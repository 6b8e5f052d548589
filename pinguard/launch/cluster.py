"""Submitting the rendered job through the `kubernetes` client, and watching what its pods run.

A RayJob is created and KubeRay does the rest; a RayCluster is created, and once its
head pod runs the locked image the entrypoint is submitted to it with Ray's
JobSubmissionClient. Meanwhile the pods of the cluster (label `ray.io/cluster`), and the
pod KubeRay submits a RayJob's entrypoint from in K8sJobMode (a batch/v1 Job named after
the RayJob, its pods labelled `job-name`, not `ray.io/cluster`), are polled: every
container's `status.containerStatuses[].imageID` must carry a digest the lock holds for
its image, or the job is deleted on the spot. A container the manifest does not declare
(a sidecar a webhook injected) may run instead when the policy's `sidecars:` allow it:
it is reported, not confirmed.

With `--admission`, the lock's ValidatingAdmissionPolicies are server-side applied first,
by the field manager every pinguard command names (`objects.FIELD_MANAGER`, forced), then
what an export of another layout left for the job's namespace is deleted: apply, then
prune, so some binding reads params throughout (`pinguard.admission.keepalive`).

Imported only by `run` and `audit`, when they reach a cluster: the `kubernetes` client
(the `k8s` extra) and ray are needed here and nowhere else.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from pinguard import untrusted_json, untrusted_text
from pinguard.admission import vap
from pinguard.admission.objects import (
    COMPONENT,
    FIELD_MANAGER,
    KEEPALIVE_COMPONENT,
    LAYOUT_LABEL,
    PARAMS_NAMESPACE,
    SCOPE_LABEL,
    Source,
)
from pinguard.errors import PinguardError
from pinguard.launch.guards import SERVICE_ACCOUNT, image_id_digest
from pinguard.launch.pods import Report, containers, judge, started
from pinguard.launch.render import GROUP, IMAGE_ANNOTATION, LOCK_ANNOTATION, Job
from pinguard.lock.lockfile import Lock
from pinguard.policy.model import Sidecar

try:
    import urllib3
    from kubernetes import client, config  # type: ignore[import-untyped]
    from kubernetes.client.exceptions import ApiException  # type: ignore[import-untyped]
except ModuleNotFoundError as missing:  # the `k8s` extra is not installed
    raise PinguardError(f"reaching a cluster needs the kubernetes client ({missing.name} is missing): "
                        "pip install 'pinguard[k8s]'") from None

BINDING = "ValidatingAdmissionPolicyBinding"
TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")  # Ray job statuses, as KubeRay's status.jobStatus repeats them
DASHBOARD_PORT = 8265  # where the head serves Ray's job submission API
SUBMITTER_CONTAINER = "ray-job-submitter"  # KubeRay's own: the default submitter pod's, or the head's in SidecarMode


class Refused(PinguardError):
    """The API server answered a call with an error `status` (403, 404, ...)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class Kube:
    """The few API calls pinguard makes, each turning failures into a PinguardError that says what was tried."""

    def __init__(self, api: Any, namespace: str) -> None:
        self.host = str(api.configuration.host)
        self.namespace = namespace  # the context's, for objects that name none
        self._custom = client.CustomObjectsApi(api)
        self._core = client.CoreV1Api(api)
        self._version = client.VersionApi(api)

    def ping(self) -> None:
        """Fail early, and clearly, on a server that is not there or refuses us."""
        with _calling(f"reaching the Kubernetes API server at {self.host}"):
            self._version.get_code(_preload_content=False).drain_conn()  # answering is all that counts

    def create(self, job: Job, namespace: str) -> dict[str, Any]:
        with _calling(f"creating {job.kind} {job.name} in namespace {namespace}",
                      hint="is KubeRay installed (the ray.io CRDs)?"):
            created: dict[str, Any] = self._custom.create_namespaced_custom_object(
                GROUP, job.version, namespace, job.plural, job.body)
        return created

    def get(self, job: Job, namespace: str, name: str) -> dict[str, Any]:
        with _calling(f"reading {job.kind} {namespace}/{name}"):
            found: dict[str, Any] = self._custom.get_namespaced_custom_object(
                GROUP, job.version, namespace, job.plural, name)
        return found

    def delete(self, job: Job, namespace: str, name: str) -> None:
        with _calling(f"deleting {job.kind} {namespace}/{name}"):
            self._custom.delete_namespaced_custom_object(GROUP, job.version, namespace, job.plural, name,
                                                         body=client.V1DeleteOptions(propagation_policy="Background"))

    def apply(self, body: dict[str, Any]) -> None:
        """Create or update a ConfigMap or an admission policy or binding by server-side apply, as kubectl does."""
        kind, metadata = str(body["kind"]), body["metadata"]
        name, namespace = str(metadata["name"]), metadata.get("namespace")
        how = {"field_manager": FIELD_MANAGER, "force": True, "field_validation": "Strict",
               "_content_type": "application/apply-patch+yaml", "_preload_content": False}
        with _calling(f"applying {kind} {f'{namespace}/' if namespace else ''}{name}",
                      hint=f"{kind} needs Kubernetes 1.30 or later" if kind in vap.PLURALS else ""):
            if kind == "ConfigMap":
                response = self._core.patch_namespaced_config_map(name, namespace, body, **how)
            else:
                response = self._custom.patch_cluster_custom_object(*_group_version(), vap.PLURALS[kind], name, body,
                                                                    **how)
        response.drain_conn()

    def listed(self, kind: str, namespace: str | None = None, selector: str | None = None) -> list[dict[str, Any]]:
        """The ConfigMaps of `namespace`, or the admission policies or bindings, selected by label."""
        what = f"listing {_plural(kind)}{f' in namespace {namespace}' if namespace else ''}"
        with _calling(what):
            if kind == "ConfigMap":
                response = self._core.list_namespaced_config_map(namespace, label_selector=selector,
                                                                 _preload_content=False)
            else:
                response = self._custom.list_cluster_custom_object(*_group_version(), vap.PLURALS[kind],
                                                                   label_selector=selector, _preload_content=False)
        return _items(what, response)

    def remove(self, kind: str, name: str, namespace: str | None = None) -> None:
        """Delete a ConfigMap or an admission policy or binding; one already gone is no error."""
        try:
            with _calling(f"deleting {kind} {f'{namespace}/' if namespace else ''}{name}"):
                if kind == "ConfigMap":
                    response = self._core.delete_namespaced_config_map(name, namespace, _preload_content=False)
                else:
                    response = self._custom.delete_cluster_custom_object(*_group_version(), vap.PLURALS[kind], name,
                                                                         _preload_content=False)
                response.drain_conn()
        except Refused as refused:
            if refused.status != 404:
                raise

    def has_config_map(self, namespace: str, name: str) -> bool:
        try:
            with _calling(f"reading ConfigMap {namespace}/{name}"):
                self._core.read_namespaced_config_map(name, namespace, _preload_content=False).drain_conn()
        except Refused as refused:
            if refused.status == 404:
                return False
            raise
        return True

    def pods(self, namespace: str | None, selector: str | None = None) -> list[dict[str, Any]]:
        """Pods as the API serves them (JSON), of one namespace or, for None, of all."""
        what = f"listing pods{f' in namespace {namespace}' if namespace else ''}"
        with _calling(what):
            if namespace is None:
                response = self._core.list_pod_for_all_namespaces(label_selector=selector, _preload_content=False)
            else:
                response = self._core.list_namespaced_pod(namespace, label_selector=selector, _preload_content=False)
        return _items(what, response)


def _items(what: str, response: Any) -> list[dict[str, Any]]:
    """The objects of a list the API server answered."""
    try:
        listed = untrusted_json.loads(response.data)
    except ValueError as exc:
        raise PinguardError(f"{what}: the API server's answer is not a list: {exc}") from None
    items = listed.get("items") if isinstance(listed, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _group_version() -> tuple[str, str]:
    group, _, version = vap.API_VERSION.partition("/")
    return group, version


def _plural(kind: str) -> str:
    return "configmaps" if kind == "ConfigMap" else vap.PLURALS[kind]


def connect(env: Mapping[str, str]) -> Kube:
    """The cluster of KUBECONFIG (or ~/.kube/config) and its current context; inside a pod without one, that pod's."""
    configuration = client.Configuration()
    kubeconfig = env.get("KUBECONFIG", "~/.kube/config")
    try:
        try:
            config.load_kube_config(config_file=kubeconfig, client_configuration=configuration, persist_config=False)
            context = config.list_kube_config_contexts(kubeconfig)[1]
            namespace = str(context.get("context", {}).get("namespace") or "default")
        except config.ConfigException:
            if not env.get("KUBERNETES_SERVICE_HOST"):
                raise
            config.load_incluster_config(client_configuration=configuration)
            namespace = (SERVICE_ACCOUNT / "namespace").read_text(encoding="utf-8").strip()
    except (config.ConfigException, OSError) as exc:
        raise PinguardError(f"no Kubernetes configuration ({kubeconfig}, nor in-cluster): {exc}") from None
    kube = Kube(client.ApiClient(configuration), namespace)
    kube.ping()
    return kube


@contextmanager
def _calling(what: str, hint: str = "") -> Iterator[None]:
    try:
        yield
    except ApiException as exc:
        try:
            message = untrusted_json.loads(exc.body).get("message") or ""
        except (TypeError, ValueError, AttributeError):  # no body, or not a Status
            message = ""
        why = f"{exc.status} {exc.reason}{f': {message}' if message else ''}"
        raise Refused(f"{what}: {why}{f' ({hint})' if hint and exc.status == 404 else ''}", exc.status) from None
    except urllib3.exceptions.HTTPError as exc:
        raise PinguardError(f"{what}: no answer: {exc}") from None


class JobSubmitter(Protocol):
    """How a job reaches a running Ray cluster: Ray's job submission API, or a test's stand-in."""

    def submit(self, address: str, entrypoint: str, runtime_env: dict[str, Any] | None,
               metadata: dict[str, str]) -> str: ...

    def status(self, address: str, job_id: str) -> str: ...


@dataclass
class RaySubmitter:
    """Ray's JobSubmissionClient, one per address."""

    _clients: dict[str, Any] = field(default_factory=dict)

    def submit(self, address: str, entrypoint: str, runtime_env: dict[str, Any] | None,
               metadata: dict[str, str]) -> str:
        with self._client(address) as ray_client:
            return str(ray_client.submit_job(entrypoint=entrypoint, runtime_env=runtime_env, metadata=metadata))

    def status(self, address: str, job_id: str) -> str:
        with self._client(address) as ray_client:
            return str(ray_client.get_job_status(job_id).value)

    @contextmanager
    def _client(self, address: str) -> Iterator[Any]:
        try:
            from ray.job_submission import JobSubmissionClient  # ray is heavy: only this path pays for it
        except ModuleNotFoundError:
            raise PinguardError("submitting to a RayCluster needs ray: pip install 'pinguard[train]'") from None
        try:
            if address not in self._clients:
                self._clients[address] = JobSubmissionClient(address)
            yield self._clients[address]
        except (OSError, RuntimeError) as exc:  # requests' errors are OSErrors; Ray raises RuntimeError on HTTP errors
            raise PinguardError(f"Ray job submission at {address}: {exc}") from None


@dataclass
class _Launched:
    """What the watch needs to know about the object it launched."""

    kube: Kube
    job: Job
    namespace: str
    name: str
    env: Mapping[str, str]
    progress: Callable[[str], None]  # how the watch goes (the command's stdout; nothing under -q)
    say: Callable[[str], None]  # what went wrong, as the command says it on stderr

    @property
    def what(self) -> str:
        return f"{self.job.kind} {self.namespace}/{self.name}"


class _Target(Protocol):
    def cluster(self) -> str | None:
        """The Ray cluster's name (its pods' `ray.io/cluster` label) once known."""

    def submitter_selector(self) -> str | None:
        """The label selector of the pod KubeRay submits the entrypoint from, when it makes one."""

    def status(self, pods: Sequence[Mapping[str, Any]], confirmed: set[str]) -> str | None:
        """The job's status once known; may act on pods that were confirmed (submit the entrypoint)."""

    def detail(self) -> str:
        """What the cluster says about how the job ended, if anything."""


@dataclass
class _RayJob:
    """KubeRay starts the cluster and submits the entrypoint; its status says how both go."""

    launched: _Launched
    _status: dict[str, Any] = field(default_factory=dict)

    def cluster(self) -> str | None:
        found = self.launched.kube.get(self.launched.job, self.launched.namespace, self.launched.name)
        self._status = found.get("status") or {}
        return self._status.get("rayClusterName") or None

    def submitter_selector(self) -> str | None:
        # The Job controller labels its pods `job-name` (and, since Kubernetes 1.27, also
        # `batch.kubernetes.io/job-name`); KubeRay names the Job after the RayJob.
        return f"job-name={self.launched.name}" if self.launched.job.submits_with_a_pod else None

    def status(self, pods: Sequence[Mapping[str, Any]], confirmed: set[str]) -> str | None:
        if self._status.get("jobDeploymentStatus") == "Failed":  # e.g. the submitter failed: no jobStatus comes
            return "FAILED"
        return self._status.get("jobStatus") or None

    def detail(self) -> str:
        return str(self._status.get("message") or "")


@dataclass
class _RayCluster:
    """The cluster comes up; the entrypoint goes to its head once the head pod runs the locked image."""

    launched: _Launched
    submitter: JobSubmitter
    address: str = ""
    job_id: str | None = None

    def cluster(self) -> str | None:
        return self.launched.name

    def submitter_selector(self) -> str | None:
        return None  # `run` submits through Ray's job client itself

    def status(self, pods: Sequence[Mapping[str, Any]], confirmed: set[str]) -> str | None:
        if self.job_id is None:
            if not any(_is_head(pod) and (pod.get("status") or {}).get("phase") == "Running"
                       and pod["metadata"]["name"] in confirmed for pod in pods):
                return None
            job = self.launched.job
            self.address = self._address()
            metadata = {k: v for k, v in job.annotations.items() if k in (LOCK_ANNOTATION, IMAGE_ANNOTATION)}
            self.job_id = self.submitter.submit(self.address, job.entrypoint(), job.runtime_env(), metadata)
            self.launched.progress(f"submitted job {self.job_id} to {self.address}")
        return self.submitter.status(self.address, self.job_id)

    def detail(self) -> str:
        return f"Ray job {self.job_id} at {self.address}"

    def _address(self) -> str:
        """The head service's dashboard; RAY_ADDRESS instead, for a cluster reached through a port-forward."""
        if self.launched.env.get("RAY_ADDRESS"):
            return self.launched.env["RAY_ADDRESS"]
        launched = self.launched
        head = (launched.kube.get(launched.job, launched.namespace, launched.name).get("status") or {}).get("head")
        service = (head or {}).get("serviceName") or f"{launched.name}-head-svc"  # KubeRay's name for it
        return f"http://{service}.{launched.namespace}.svc.cluster.local:{DASHBOARD_PORT}"


def _is_head(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("labels", {}).get("ray.io/node-type") == "head")


def launch(job: Job, lock: Lock, env: Mapping[str, str], *, progress: Callable[[str], None], say: Callable[[str], None],
           timeout: float, poll: float, submitter: JobSubmitter | None = None, admission: Source | None = None,
           sidecars: Sequence[Sidecar] = ()) -> int:
    """Create the job, then watch it to the end: 0 when it succeeded on the locked image, else 1 with why
    told to `say`. How it goes is told to `progress`, line by line: the command decides where each goes.

    With `admission`, the lock is applied as ValidatingAdmissionPolicies bound to the job's namespace first
    (`admit_only_the_lock`).
    """
    kube = connect(env)
    namespace = job.namespace or kube.namespace
    job.body["metadata"]["namespace"] = namespace
    if admission is not None:
        admit_only_the_lock(kube, admission, namespace, progress)
    created = kube.create(job, namespace)
    launched = _Launched(kube, job, namespace, str(created["metadata"]["name"]), env, progress, say)
    launched.progress(f"created {launched.what} on {kube.host}")
    target: _Target = _RayJob(launched) if job.kind == "RayJob" else _RayCluster(launched, submitter or RaySubmitter())
    return _watch(launched, target, lock, timeout, poll, sidecars)


def admit_only_the_lock(kube: Kube, source: Source, namespace: str, progress: Callable[[str], None]) -> None:
    """Apply the keepalive, the params, the policies and their bindings to `namespace`, in that order, then delete
    the bindings and params an export of another layout left for it: no moment denies every pod, and no moment
    leaves the API server without a binding that reads params (Kubernetes #130887)."""
    exported = vap.objects(source, (namespace,), "deny")
    for body in exported:
        kube.apply(body)
        progress(_done("applied", body))
    labels = next(b["metadata"]["labels"] for b in exported if b["kind"] == BINDING and LAYOUT_LABEL in
                  b["metadata"]["labels"])
    scope, layout = labels[SCOPE_LABEL], labels[LAYOUT_LABEL]
    for kind, where in ((BINDING, None), ("ConfigMap", PARAMS_NAMESPACE)):
        for body in kube.listed(kind, where, f"{SCOPE_LABEL}={scope},{LAYOUT_LABEL}!={layout}"):
            name = _of_another_layout(body, scope, layout)
            if name is not None:
                kube.remove(kind, name, where)
                progress(_done("deleted", {"kind": kind, "metadata": {"name": name,
                                                                      **({"namespace": where} if where else {})}}))


def _of_another_layout(body: Mapping[str, Any], scope: str, layout: str) -> str | None:
    """The name of a listed object the selector `scope=…,layout!=…` selects, held again against what the server
    served, so a server that ignored the selector costs nothing; never the keepalive's (it has no scope)."""
    metadata = body.get("metadata")
    found = metadata.get("labels") if isinstance(metadata, dict) else None
    if not isinstance(found, dict) or not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
        return None
    selected = found.get(SCOPE_LABEL) == scope and found.get(LAYOUT_LABEL) != layout
    return str(metadata["name"]) if selected and found.get(COMPONENT) != KEEPALIVE_COMPONENT else None


def _done(done: str, body: Mapping[str, Any]) -> str:
    metadata = body["metadata"]
    where = f"{metadata['namespace']}/" if "namespace" in metadata else ""
    return f"{done} {body['kind']} {where}{untrusted_text.shown(metadata['name'])}"


def _watch(launched: _Launched, target: _Target, lock: Lock, timeout: float, poll: float,
           sidecars: Sequence[Sidecar] = ()) -> int:
    deadline = time.monotonic() + timeout
    declared = _declared(launched.job)
    confirmed: set[str] = set()
    allowed = 0  # sidecars the policy let run in the confirmed pods
    while True:
        cluster = target.cluster()
        pods = _pods(launched, cluster, target.submitter_selector()) if cluster else []
        for pod in pods:
            judged = judge(pod, lock, sidecars, declared)
            if judged.problems:
                return _stop(launched, judged.problems)
            if started(pod) and pod["metadata"]["name"] not in confirmed:
                confirmed.add(pod["metadata"]["name"])
                allowed += len(judged.allowed)
                _confirm(launched, pod, judged.allowed)
        status = target.status(pods, confirmed)
        if status in TERMINAL:
            return _verdict(launched, target, status, len(confirmed), allowed)
        if time.monotonic() >= deadline:
            waiting = "" if cluster else "; no Ray cluster yet: is the KubeRay operator running?"
            launched.say(f"timed out after {timeout:g} s: {launched.what} is {status or 'not started'}, "
                         f"{len(confirmed)} of {launched.job.expected_pods()} pods confirmed{waiting}; it is left "
                         f"running: `kubectl delete {launched.job.plural} {launched.name} -n {launched.namespace}` "
                         "stops it")
            return 1
        time.sleep(poll)


def _declared(job: Job) -> frozenset[str]:
    """The names of the containers the manifest declares, and KubeRay's submitter's: never a sidecar."""
    names = {str(container.get("name", "")) for template in job.pod_templates()
             for key in ("initContainers", "containers") for container in (template.get("spec") or {}).get(key) or []}
    return frozenset(names | ({SUBMITTER_CONTAINER} if job.kind == "RayJob" else set()))


def _pods(launched: _Launched, cluster: str, submitter: str | None) -> list[dict[str, Any]]:
    """The pods of the Ray cluster and of KubeRay's submitter, each once."""
    selectors = [f"ray.io/cluster={cluster}", *([submitter] if submitter else [])]
    found = {pod["metadata"]["name"]: pod for selector in selectors
             for pod in launched.kube.pods(launched.namespace, selector)}
    return list(found.values())


def _stop(launched: _Launched, problems: Sequence[Report]) -> int:
    for report in problems:
        launched.say(str(report))
    launched.kube.delete(launched.job, launched.namespace, launched.name)
    launched.say(f"stopped: deleted {launched.what}: its pods must run the locked images")
    return 1


def _confirm(launched: _Launched, pod: Mapping[str, Any], allowed: Sequence[Report]) -> None:
    """Say what a pod that started runs: the locked digests, then each sidecar the policy allows."""
    excused = {report.container for report in allowed}
    runs = ", ".join(f"{container.name} runs {image_id_digest(container.image_id)}" for container in containers(pod)
                     if container.name not in excused)
    launched.progress(f"pod {pod['metadata']['name']}: {runs} (locked)")
    for report in allowed:
        launched.progress(str(report))


def _verdict(launched: _Launched, target: _Target, status: str, confirmed: int, allowed: int) -> int:
    expected = launched.job.expected_pods()
    detail = f" ({target.detail()})" if target.detail() else ""
    if launched.job.kind == "RayCluster":
        launched.progress(f"{launched.what} is left running: `kubectl delete raycluster {launched.name} "
                     f"-n {launched.namespace}` removes it")
    if confirmed < expected:
        launched.say(f"{launched.what} ended {status}{detail}, but only {confirmed} of {expected} pods were seen "
                     "running the locked image before they went: what ran is not confirmed")
        return 1
    if status != "SUCCEEDED":
        launched.say(f"{launched.what} ended {status}{detail}")
        return 1
    besides = f", besides {allowed} sidecar{'s' if allowed > 1 else ''} the policy allows" if allowed else ""
    launched.progress(f"{launched.what} SUCCEEDED; {confirmed} pods ran the locked images{besides}")
    return 0
