"""A FAKE Kubernetes API server, for tests: no real API server can run where the tests run.

It speaks the paths the real `kubernetes` client and the in-pod guard use, with JSON
bodies shaped as the real API's (kind, apiVersion, metadata, items; errors as `Status`):

    GET    /version
    GET    /apis/ray.io/v1/namespaces/{ns}/{rayjobs|rayclusters}       list
    POST   /apis/ray.io/v1/namespaces/{ns}/{rayjobs|rayclusters}       create
    GET    /apis/ray.io/v1/namespaces/{ns}/{rayjobs|rayclusters}/{name}
    DELETE /apis/ray.io/v1/namespaces/{ns}/{rayjobs|rayclusters}/{name}
    GET    /api/v1/namespaces/{ns}/pods?labelSelector=...
    GET    /api/v1/pods                                                all namespaces
    GET    /api/v1/namespaces/{ns}/pods/{name}
    GET    /api/v1[/namespaces/{ns}]/configmaps?labelSelector=...&fieldSelector=metadata.name=...
    GET|PATCH|DELETE /api/v1/namespaces/{ns}/configmaps/{name}        PATCH: server-side apply
    GET    /apis/admissionregistration.k8s.io/v1/{validatingadmissionpolicies|validatingadmissionpolicybindings}?...
    GET|PATCH|DELETE /apis/admissionregistration.k8s.io/v1/{validatingadmissionpolicies|...bindings}/{name}
    GET    /api, /apis (aggregated discovery when asked), /api/v1, /apis/{group}/{version}: discovery, for kubectl

It plays KubeRay too, as a test programs it: creating a RayJob or RayCluster "starts"
its pods at once (the head and `replicas` workers per group, labelled `ray.io/cluster`,
Running, each container's `imageID` carrying the digest its image names, or the one
`wrong_digests` programs for the pod at that position: 0 the head, then the workers,
then a RayJob's submitter pod). A RayJob gets `status.rayClusterName` on the
`cluster_after`-th read, and in K8sJobMode (the default submissionMode) the pod of its
submitter Job with it: named after the RayJob plus a suffix, labelled `job-name` and
`batch.kubernetes.io/job-name` (as the Job controller does) and not `ray.io/cluster`,
running the `submitterPodTemplate`'s containers or KubeRay's default `ray-job-submitter`
on the head's image. Its final `jobStatus` comes on the `finish_after`-th read, the
submitter pod Succeeded. `sidecars` programs containers a webhook would have injected
into the pod at a position; `debug` ephemeral containers `kubectl debug` adds to the running
pod at a position, on the `debug_after`-th read of a RayJob (`add_ephemeral` adds one to a
pod body). `forbidden` names resources RBAC refuses: every request to them is answered 403.
DELETE of a RayJob or RayCluster removes it and its cluster's pods and is recorded in
`deleted`. Every request is recorded (`requests`).

ConfigMaps and admission policies and bindings are kept as an API server keeps them,
by a server-side apply implementation (`testing.server_side_apply`): PATCH with
`application/apply-patch+yaml` and a `fieldManager` merges the applied configuration
into the object (`applied`, without its managedFields), records which manager owns
which field (`owners`, served as `metadata.managedFields`) and refuses a different
value for another manager's field with 409 Conflict unless `force=true`. Lists select
by label (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`) and by `metadata.name`;
DELETE removes (recorded in `removed`). It evaluates no policy, but models Kubernetes
#130887: once some binding whose policy has `paramKind` v1 ConfigMap has existed, the
first request after which none does stops the API server's params informer for good
(`informer_died` is that request). The real kubectl drives it with `--validate=false`
(no openapi is served).
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from testing import server_side_apply as ssa
from testing.fake_registry import Action, FakeRegistry, Request, Response, Route

_RAY = r"/apis/ray\.io/v1/namespaces/(?P<ns>[^/]+)/(?P<plural>rayjobs|rayclusters)"
_KINDS = {"rayjobs": "RayJob", "rayclusters": "RayCluster"}
ADMISSION = "admissionregistration.k8s.io/v1"
RESOURCES = {  # what discovery serves: resource -> (group/version, kind, namespaced)
    "pods": ("v1", "Pod", True),
    "configmaps": ("v1", "ConfigMap", True),
    "validatingadmissionpolicies": (ADMISSION, "ValidatingAdmissionPolicy", False),
    "validatingadmissionpolicybindings": (ADMISSION, "ValidatingAdmissionPolicyBinding", False),
    "rayjobs": ("ray.io/v1", "RayJob", True),
    "rayclusters": ("ray.io/v1", "RayCluster", True),
}
_STORED = (  # the collections server-side apply reaches: ConfigMaps of a namespace or all, the admission kinds
    r"/api/v1(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>configmaps)",
    r"/apis/admissionregistration\.k8s\.io/v1/(?P<plural>validatingadmissionpolicies|validatingadmissionpolicybindings)",
)
_NAME = r"/(?P<name>[^/]+)"
APPLY_PATCH = "application/apply-patch+yaml"
_AGGREGATED = "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_RESOURCE = r"/apis?(?:/(?P<group>[^/]+\.[^/]+))?/v1(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+).*"
_VERB = {"GET": "list", "PATCH": "patch", "DELETE": "delete", "POST": "create", "PUT": "update"}  # RBAC's, roughly
_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
_REQUIREMENT = re.compile(r"\s*(?P<not>!)?\s*(?P<key>[^\s!=,()]+)\s*(?:(?P<op>==|=|!=)\s*(?P<value>[^\s,()]*)"
                          r"|\s(?P<set>in|notin)\s*\((?P<values>[^()]*)\))?\s*")
STARTED_AT = "2026-11-30T06:00:00Z"


def image_id_for(image: str, digest: str | None = None, *, docker: bool = False) -> str:
    """What a kubelet reports for `image`: `repo@digest`, or `docker-pullable://repo@digest` as dockershim did.

    The digest is the one the image names, else `digest`, else one made up from the name.
    """
    name, _, pinned = image.partition("@")
    repository = re.sub(r":[^:/]+$", "", name)
    digest = digest or pinned or "sha256:" + hashlib.sha256(image.encode()).hexdigest()
    return f"{'docker-pullable://' if docker else ''}{repository}@{digest}"


def add_ephemeral(body: dict[str, Any], name: str, image: str, image_id: str) -> dict[str, Any]:
    """`body` with an ephemeral container running, as `kubectl debug` leaves a pod: in the spec and its status."""
    body["spec"].setdefault("ephemeralContainers", []).append(
        {"name": name, "image": image, "stdin": True, "tty": True, "targetContainerName": ""})
    body["status"].setdefault("ephemeralContainerStatuses", []).append(
        {"name": name, "image": image, "imageID": image_id, "ready": False, "restartCount": 0,
         "state": {"running": {"startedAt": STARTED_AT}}})
    return body


def pod(namespace: str, name: str, containers: Sequence[tuple[str, str, str]], *,
        labels: Mapping[str, str] | None = None, env: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A Running pod as the API serves it; `containers` are (name, image, imageID)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {}),
                     "uid": hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:32]},
        "spec": {"containers": [{"name": c, "image": image, "env": list(env)} for c, image, _ in containers]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": c, "image": image, "imageID": image_id, "ready": True, "restartCount": 0, "started": True,
                 "state": {"running": {"startedAt": STARTED_AT}}}
                for c, image, image_id in containers
            ],
        },
    }


class FakeKube:
    """The fake API server on 127.0.0.1 and a free port; a context manager."""

    def __init__(self, *, cluster_after: int = 2, finish_after: int = 4, final_status: str = "SUCCEEDED",
                 wrong_digests: Mapping[int, str] | None = None,
                 sidecars: Mapping[int, Sequence[tuple[str, str]]] | None = None,
                 debug: Mapping[int, Sequence[tuple[str, str]]] | None = None, debug_after: int = 3,
                 forbidden: Sequence[str] = ()) -> None:
        self.cluster_after = cluster_after
        self.finish_after = finish_after
        self.final_status = final_status
        self.wrong_digests = dict(wrong_digests or {})
        self.sidecars = dict(sidecars or {})  # position -> (name, image) injected into that pod
        self.debug = dict(debug or {})  # position -> (name, image) of ephemeral containers added to that pod
        self.debug_after = debug_after
        self.forbidden = frozenset(forbidden)  # resources (plural) RBAC refuses us: every request answered 403
        self._positions: dict[int, tuple[str, str]] = {}  # position -> (namespace, name) of the pod
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}  # (plural, namespace, name)
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}  # (namespace, name)
        self.deleted: list[tuple[str, str, str]] = []
        self.applied: dict[tuple[str, str, str], dict[str, Any]] = {}  # (resource, namespace or "", name)
        self.owners: dict[tuple[str, str, str], ssa.Owners] = {}  # of each applied object: manager -> fields
        self.removed: list[tuple[str, str, str]] = []  # applied objects deleted, in order
        self.informer_died: Request | None = None  # the request after which no binding read params (#130887)
        self._informer_started = False
        self._version = 1  # resourceVersion
        self._reads: Counter[tuple[str, str, str]] = Counter()
        self._lock = threading.Lock()
        self._server = FakeRegistry([
            Route("*", r".*", self._refuse),
            Route("GET", r"/version/?", self._server_version),
            Route("GET", r"/api/?|/apis/?|/api/v1/?|/apis/[^/]+/[^/]+/?", self._discovery),
            Route("*", _RAY, self._collection),
            Route("*", _RAY + r"/(?P<name>[^/]+)", self._object),
            Route("GET", r"/api/v1/pods", self._pods),
            Route("GET", r"/api/v1/namespaces/(?P<ns>[^/]+)/pods", self._pods),
            Route("GET", r"/api/v1/namespaces/(?P<ns>[^/]+)/pods/(?P<name>[^/]+)", self._pod),
            *(Route("GET", path, self._list) for path in _STORED),
            *(Route("*", path + _NAME, self._stored) for path in _STORED),
        ])
        self.url = self._server.url

    def __enter__(self) -> FakeKube:
        self._server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.__exit__(*exc)

    @property
    def requests(self) -> list[Request]:
        return self._server.requests

    def posted(self, plural: str) -> list[dict[str, Any]]:
        """The bodies POSTed to create `plural` objects."""
        return [json.loads(r.body) for r in self._server.requests_to(_RAY.replace("(?P<plural>rayjobs|rayclusters)",
                                                                                  plural)) if r.method == "POST"]

    def add_pod(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.pods[(body["metadata"]["namespace"], body["metadata"]["name"])] = body

    def write_kubeconfig(self, path: Path, namespace: str = "default", token: str = "fake-token") -> Path:
        """A kubeconfig for the real client: this server over plain HTTP, a bearer token, `namespace` as default."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": token}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake", "namespace": namespace}}],
            "current-context": "fake",
        }
        path.write_text(json.dumps(config))  # JSON is YAML
        return path

    # --- the API ---

    def _refuse(self, request: Request) -> Action | None:
        """403 for a forbidden resource, worded as RBAC words it; None lets the other routes answer."""
        match = re.fullmatch(_RESOURCE, request.bare_path)
        if not match or match["plural"] not in self.forbidden:
            return None
        where = f'in the namespace "{match["ns"]}"' if match["ns"] else "at the cluster scope"
        return _status(403, "Forbidden", f'{match["plural"]}{"." + match["group"] if match["group"] else ""} is '
                       f'forbidden: User "system:serviceaccount:team:auditor" cannot {_VERB[request.method]} resource '
                       f'"{match["plural"]}" in API group "{match["group"] or ""}" {where}')

    def _server_version(self, request: Request) -> Action:
        return _json({"major": "1", "minor": "31", "gitVersion": "v1.31.0-fake", "gitCommit": "0" * 40,
                      "gitTreeState": "clean", "buildDate": STARTED_AT, "goVersion": "go1.22.5", "compiler": "gc",
                      "platform": "linux/amd64"})

    def _collection(self, request: Request) -> Action:
        found = _groups(_RAY, request)
        ns, plural = found["ns"], found["plural"]
        with self._lock:
            if request.method == "GET":
                items = [o for (p, n, _), o in self.objects.items() if p == plural and n == ns]
                return _json({"apiVersion": "ray.io/v1", "kind": _KINDS[plural] + "List",
                              "metadata": {"resourceVersion": "1"}, "items": items})
            if request.method != "POST":
                return _status(405, "MethodNotAllowed", f"{request.method} is not allowed here")
            body = json.loads(request.body)
            name = body["metadata"]["name"]
            if (plural, ns, name) in self.objects:
                return _status(409, "AlreadyExists", f'{plural}.ray.io "{name}" already exists')
            body["metadata"] = {**body["metadata"], "namespace": ns, "uid": f"uid-{name}", "resourceVersion": "1",
                                "creationTimestamp": STARTED_AT}
            body["status"] = {}
            self.objects[(plural, ns, name)] = body
            if plural == "rayclusters":
                body["status"] = {"state": "ready", "head": {"serviceName": f"{name}-head-svc"}}
                self._start(ns, name, body["spec"])
            else:
                self._start(ns, f"{name}-raycluster-fake", body["spec"].get("rayClusterSpec") or {})
            return _json(body, 201)

    def _object(self, request: Request) -> Action:
        found = _groups(_RAY + r"/(?P<name>[^/]+)", request)
        key = (found["plural"], found["ns"], found["name"])
        with self._lock:
            if key not in self.objects:
                return _status(404, "NotFound", f'{key[0]}.ray.io "{key[2]}" not found')
            body = self.objects[key]
            if request.method == "DELETE":
                del self.objects[key]
                self.deleted.append(key)
                cluster = key[2] if key[0] == "rayclusters" else body["status"].get("rayClusterName")
                self.pods = {k: p for k, p in self.pods.items()
                             if p["metadata"]["labels"].get("ray.io/cluster") != cluster}
                return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                              "details": {"name": key[2], "group": "ray.io", "kind": key[0], "uid": f"uid-{key[2]}"}})
            if request.method != "GET":
                return _status(405, "MethodNotAllowed", f"{request.method} is not allowed here")
            if key[0] == "rayjobs":
                self._reads[key] += 1
                self._progress(body, self._reads[key])
            return _json(body)

    def _progress(self, job: dict[str, Any], reads: int) -> None:
        """What KubeRay would have done by the `reads`-th read of the RayJob."""
        if reads >= self.cluster_after:
            job["status"] = {"rayClusterName": f"{job['metadata']['name']}-raycluster-fake",
                             "jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}
            self._submit(job)
        if reads >= self.debug_after:
            self._debug()
        if reads >= self.finish_after:
            job["status"].update(jobDeploymentStatus="Complete", jobStatus=self.final_status)
            if _submitter_key(job) in self.pods:
                _finish(self.pods[_submitter_key(job)])

    def _start(self, ns: str, cluster: str, spec: Mapping[str, Any]) -> None:
        """The pods of a Ray cluster: the head, then each worker group's replicas."""
        groups = [("head", "head", spec.get("headGroupSpec") or {}, 1)]
        groups += [("worker", g.get("groupName", "workers"), g, int(g.get("replicas", g.get("minReplicas", 0))))
                   for g in spec.get("workerGroupSpecs") or []]
        position = 0
        for node_type, group, group_spec, replicas in groups:
            template = group_spec.get("template") or {}
            for replica in range(replicas):
                name = f"{cluster}-head" if node_type == "head" else f"{cluster}-{group}-worker-{replica}"
                labels = {"ray.io/cluster": cluster, "ray.io/node-type": node_type, "ray.io/group": group}
                containers = self._containers(template, position, docker=node_type == "head")
                self.pods[(ns, name)] = pod(ns, name, containers, labels=labels)
                self._positions[position] = (ns, name)
                position += 1

    def _submit(self, job: Mapping[str, Any]) -> None:
        """KubeRay's submitter in K8sJobMode, once: a batch/v1 Job named after the RayJob, and the pod it starts."""
        spec, name, ns = job["spec"], job["metadata"]["name"], job["metadata"]["namespace"]
        if (spec.get("submissionMode") or "K8sJobMode") != "K8sJobMode" or _submitter_key(job) in self.pods:
            return
        head = ((spec.get("rayClusterSpec") or {}).get("headGroupSpec") or {}).get("template") or {}
        ray = ((head.get("spec") or {}).get("containers") or [])[:1]  # the head's Ray container: its image
        template = spec.get("submitterPodTemplate") or {
            "spec": {"containers": [{"name": "ray-job-submitter", "image": c["image"]} for c in ray]}}
        cluster = job["status"]["rayClusterName"]
        position = sum(1 for p in self.pods.values() if p["metadata"]["labels"].get("ray.io/cluster") == cluster)
        uid = hashlib.sha256(f"job/{ns}/{name}".encode()).hexdigest()[:32]
        labels = {**(template.get("metadata") or {}).get("labels", {}), "batch.kubernetes.io/controller-uid": uid,
                  "batch.kubernetes.io/job-name": name, "controller-uid": uid, "job-name": name}
        body = pod(ns, _submitter_key(job)[1], self._containers(template, position), labels=labels)
        body["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid,
                                                "controller": True, "blockOwnerDeletion": True}]
        self.pods[_submitter_key(job)] = body
        self._positions[position] = _submitter_key(job)

    def _debug(self) -> None:
        """Add the programmed ephemeral containers to the pods that are there, each once."""
        for position in [p for p in self.debug if p in self._positions and self._positions[p] in self.pods]:
            for name, image in self.debug.pop(position):
                add_ephemeral(self.pods[self._positions[position]], name, image, image_id_for(image))

    def _containers(self, template: Mapping[str, Any], position: int, *,
                    docker: bool = False) -> list[tuple[str, str, str]]:
        """(name, image, imageID) of the pod at `position`: its template's containers, then those injected into it."""
        declared = [(c["name"], c["image"]) for c in (template.get("spec") or {}).get("containers") or []]
        wrong = self.wrong_digests.get(position)
        return ([(c, image, image_id_for(image, wrong, docker=docker)) for c, image in declared]
                + [(c, image, image_id_for(image, docker=docker)) for c, image in self.sidecars.get(position, ())])

    def _pods(self, request: Request) -> Action:
        ns = _groups(r"/api/v1/namespaces/(?P<ns>[^/]+)/pods", request).get("ns")  # None: every namespace
        try:
            wanted = _selector(request.query.get("labelSelector", [""])[0])
        except ValueError as exc:
            return _status(400, "BadRequest", f"unable to parse requirement: {exc}")
        with self._lock:
            items = [p for (n, _), p in sorted(self.pods.items())
                     if ns in (None, n) and wanted(p["metadata"]["labels"])]
        return _json({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": items})

    def _pod(self, request: Request) -> Action:
        found = _groups(r"/api/v1/namespaces/(?P<ns>[^/]+)/pods/(?P<name>[^/]+)", request)
        with self._lock:
            body = self.pods.get((found["ns"], found["name"]))
        return _json(body) if body is not None else _status(404, "NotFound", f'pods "{found["name"]}" not found')


    # --- ConfigMaps and admission policies and bindings: server-side apply, lists, deletes ---

    def _stored(self, request: Request) -> Action:
        """GET, server-side apply (PATCH) or DELETE of one object; the body must name what the path names."""
        found = _place(request, _NAME)
        plural, name, ns = found["plural"], found["name"], found.get("ns") or ""
        if (plural == "configmaps") != bool(ns):  # a ConfigMap lives in a namespace, a policy in none
            return _status(404, "NotFound", "the server could not find the requested resource")
        key = (plural, ns, name)
        with self._lock:
            if request.method == "GET":
                return _json(self._served(key)) if key in self.applied else _not_found(plural, name)
            if request.method == "DELETE":
                if key not in self.applied:
                    return _not_found(plural, name)
                del self.applied[key], self.owners[key]
                self.removed.append(key)
                self._watch_informer(request)
                return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                              "details": {"name": name, "kind": plural, "uid": f"uid-{name}"}})
            if request.method != "PATCH":
                return _status(405, "MethodNotAllowed", f"{request.method} is not allowed here")
            return self._apply(request, key)

    def _apply(self, request: Request, key: tuple[str, str, str]) -> Action:
        """Server-side apply (`testing.server_side_apply`); the informer is watched after it."""
        manager = (request.query.get("fieldManager") or [""])[0]
        if not request.headers.get("Content-Type", "").startswith(APPLY_PATCH) or not manager:
            return _status(415 if manager else 422, "UnsupportedMediaType" if manager else "Invalid",
                           f"only server-side apply ({APPLY_PATCH} with a fieldManager) is served")
        try:
            body = yaml.safe_load(request.body)  # JSON is YAML: kubectl and the client send JSON
        except yaml.YAMLError as exc:
            return _status(400, "BadRequest", f"the body is no YAML: {exc}")
        plural, ns, name = key
        api_version, kind, _ = RESOURCES[plural]
        metadata = body.get("metadata") if isinstance(body, dict) else None
        if not isinstance(metadata, dict) or (body.get("apiVersion"), body.get("kind"), metadata.get("name"),
                                              metadata.get("namespace") or "") != (api_version, kind, name, ns):
            return _status(400, "BadRequest", "the body does not name the object the path names")
        force = (request.query.get("force") or ["false"])[0].lower() == "true"
        try:
            live, owners = ssa.apply(self.applied.get(key), self.owners.get(key, {}), body, manager, force)
        except ssa.Conflicts as refused:
            causes = [{"type": "FieldManagerConflict", "message": f'conflict with "{c.manager}"',
                       "field": ssa.spelled(c.path)} for c in refused.conflicts]
            return _status(409, "Conflict", str(refused), {"causes": causes})
        created = key not in self.applied
        self._version += 1
        live["metadata"].update(uid=f"uid-{name}", resourceVersion=str(self._version),
                                creationTimestamp=(self.applied.get(key) or {}).get("metadata", {}).get(
                                    "creationTimestamp", STARTED_AT))
        self.applied[key], self.owners[key] = live, owners
        self._watch_informer(request)
        return _json(self._served(key), 201 if created else 200)

    def _list(self, request: Request) -> Action:
        """The stored objects of a kind, in a namespace or all, selected by label and by `metadata.name`."""
        found = _place(request)
        plural, ns = found["plural"], found.get("ns")
        try:
            labels = _selector(request.query.get("labelSelector", [""])[0])
            named = _selector(request.query.get("fieldSelector", [""])[0])
        except ValueError as exc:
            return _status(400, "BadRequest", f"unable to parse requirement: {exc}")
        with self._lock:
            items = [self._served(k) for k, o in sorted(self.applied.items()) if k[0] == plural and ns in (None, k[1])
                     and labels(o["metadata"].get("labels") or {})
                     and named({"metadata.name": k[2], "metadata.namespace": k[1]})]
            version = str(self._version)
        api_version, kind, _ = RESOURCES[plural]
        return _json({"apiVersion": api_version, "kind": f"{kind}List", "metadata": {"resourceVersion": version},
                      "items": items})

    def _served(self, key: tuple[str, str, str]) -> dict[str, Any]:
        """The object as GET serves it: with `metadata.managedFields`."""
        live = copy.deepcopy(self.applied[key])
        live["metadata"]["managedFields"] = ssa.managed_fields(self.owners[key], live["apiVersion"])
        return live

    def _watch_informer(self, request: Request) -> None:
        """Kubernetes #130887: the params informer stops for good once no binding's policy reads a ConfigMap."""
        reading = self.bindings_reading_params()
        if reading:
            self._informer_started = True
        elif self._informer_started and self.informer_died is None:
            self.informer_died = request

    def bindings_reading_params(self) -> list[str]:
        """The bindings whose policy exists and has `paramKind` v1 ConfigMap: what keeps the informer running."""
        reads = {name for (plural, _, name), o in self.applied.items() if plural == "validatingadmissionpolicies"
                 and (o.get("spec") or {}).get("paramKind") == {"apiVersion": "v1", "kind": "ConfigMap"}}
        return [name for (plural, _, name), o in sorted(self.applied.items())
                if plural == "validatingadmissionpolicybindings" and (o.get("spec") or {}).get("policyName") in reads]

    # --- discovery, as kubectl reads it ---

    def _discovery(self, request: Request) -> Action:
        """/api and /apis, aggregated (apidiscovery.k8s.io/v2) when asked for, else the group lists; the resources
        of a group version."""
        path = request.bare_path.rstrip("/")
        served = [(gv, plural, kind, namespaced) for plural, (gv, kind, namespaced) in RESOURCES.items()]
        if path in ("/api", "/apis"):
            versions = sorted({gv for gv, *_ in served if ("/" in gv) == (path == "/apis")})
            if _AGGREGATED in request.headers.get("Accept", ""):
                return _json(_aggregated(versions, served), content_type=f"application/json;{_AGGREGATED}")
            if path == "/api":
                return _json({"kind": "APIVersions", "versions": versions, "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": self._server.host}]})
            return _json({"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": gv.split("/")[0], "versions": [{"groupVersion": gv, "version": gv.split("/")[1]}],
                 "preferredVersion": {"groupVersion": gv, "version": gv.split("/")[1]}} for gv in versions]})
        group_version = path.removeprefix("/api/").removeprefix("/apis/")
        resources = [{"name": plural, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
                      "verbs": _VERBS} for gv, plural, kind, namespaced in served if gv == group_version]
        if not resources:
            return _status(404, "NotFound", "the server could not find the requested resource")
        return _json({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
                      "resources": resources})


def _submitter_key(job: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of the submitter pod: the Job's name, the RayJob's, and a suffix as the Job controller adds."""
    name = job["metadata"]["name"]
    return job["metadata"]["namespace"], f"{name}-{hashlib.sha256(name.encode()).hexdigest()[:5]}"


def _finish(body: dict[str, Any]) -> None:
    """A pod whose containers all exited 0: still reporting the images they ran."""
    body["status"]["phase"] = "Succeeded"
    for status in body["status"]["containerStatuses"]:
        status.update(ready=False, started=False, state={"terminated": {"exitCode": 0, "reason": "Completed",
                                                                        "startedAt": STARTED_AT}})


def _place(request: Request, item: str = "") -> dict[str, str]:
    """The resource, namespace and (`item`: `_NAME`) name a path to a stored object or its collection names."""
    return next(found for found in (_groups(pattern + item, request) for pattern in _STORED) if found)


def _groups(pattern: str, request: Request) -> dict[str, str]:
    match = re.fullmatch(pattern, request.bare_path)
    return match.groupdict() if match else {}


def _selector(text: str) -> Callable[[Mapping[str, str]], bool]:
    """A label (or field) selector as the API server reads it: requirements joined by `,`, all to hold."""
    requirements = []
    for part in re.findall(r"(?:[^,(]|\([^)]*\))+", text):
        match = _REQUIREMENT.fullmatch(part)
        if not match or (match["not"] and (match["op"] or match["set"])):
            raise ValueError(repr(part))
        requirements.append(match)

    def holds(labels: Mapping[str, str], match: re.Match[str]) -> bool:
        value = labels.get(match["key"])
        if match["set"]:
            listed = {word.strip() for word in match["values"].split(",")}
            return (value in listed) if match["set"] == "in" else (value not in listed)
        if match["op"]:
            return (value == match["value"]) if match["op"] != "!=" else (value != match["value"])
        return (value is None) if match["not"] else (value is not None)

    return lambda labels: all(holds(labels, match) for match in requirements)


def _aggregated(versions: Sequence[str], served: Sequence[tuple[str, str, str, bool]]) -> dict[str, Any]:
    """An APIGroupDiscoveryList (apidiscovery.k8s.io/v2): every group version and its resources in one answer."""
    items = []
    for group_version in versions:
        group, _, version = group_version.rpartition("/")
        resources = [{"resource": plural, "singularResource": kind.lower(), "verbs": _VERBS,
                      "scope": "Namespaced" if namespaced else "Cluster",
                      "responseKind": {"group": group, "version": version, "kind": kind}}
                     for gv, plural, kind, namespaced in served if gv == group_version]
        items.append({"metadata": {"name": group},
                      "versions": [{"version": version, "freshness": "Current", "resources": resources}]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


def _json(body: Mapping[str, Any], status: int = 200, content_type: str = "application/json") -> Response:
    return Response(status, {"Content-Type": content_type}, json.dumps(body).encode())


def _status(code: int, reason: str, message: str, details: Mapping[str, Any] | None = None) -> Response:
    """An error as the API answers it: a `Status` object."""
    return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                  "reason": reason, "code": code, **({"details": details} if details else {})}, code)


def _not_found(plural: str, name: str) -> Response:
    return _status(404, "NotFound", f'{plural} "{name}" not found')
