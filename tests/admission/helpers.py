"""The exported ValidatingAdmissionPolicies judged as the API server judges a request, their CEL run as it runs it.

`admit` does what the admission plugin does for one request: each binding whose
policy's `matchConstraints` (group, version, resource, operation) and whose namespace
selector match is evaluated with the params it names (missing params deny: the
binding's `parameterNotFoundAction`); each evaluation runs the variables (in order,
each seeing the ones before), then the validation, then on failure the
`messageExpression`; any evaluation that fails with the action `Deny` denies the
request, and the server answers with the message of one of them (the first it meets,
in an order it does not fix). A variable's cost is charged to the validation that reads
it, and one evaluation may spend `EVALUATION_BUDGET` in all. A CEL error is raised: the
API server would deny the request (`failurePolicy: Fail`), and no object here should
make one. The CEL is the API server's, not cel-python's (`tests.admission.cel`).
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import celpy
from celpy import celtypes
from celpy.evaluation import CELEvalError

from pinguard.admission.objects import COMPONENT, KEEPALIVE_COMPONENT
from tests.admission.cel import Meter, evaluate

EVALUATION_BUDGET = 10_000_000  # RuntimeCELCostBudget: one evaluation of a policy, all its expressions

# kind -> (API group, version, resource), for every kind that holds a pod spec
RESOURCES = {
    "Pod": ("", "v1", "pods"),
    "Deployment": ("apps", "v1", "deployments"),
    "StatefulSet": ("apps", "v1", "statefulsets"),
    "DaemonSet": ("apps", "v1", "daemonsets"),
    "ReplicaSet": ("apps", "v1", "replicasets"),
    "ReplicationController": ("", "v1", "replicationcontrollers"),
    "Job": ("batch", "v1", "jobs"),
    "CronJob": ("batch", "v1", "cronjobs"),
    "RayCluster": ("ray.io", "v1", "rayclusters"),
    "RayJob": ("ray.io", "v1", "rayjobs"),
    "RayService": ("ray.io", "v1", "rayservices"),
    "RayCronJob": ("ray.io", "v1", "raycronjobs"),
    "PyTorchJob": ("kubeflow.org", "v1", "pytorchjobs"),
}


# --- admission ---

@dataclass(frozen=True)
class Verdict:
    allowed: bool
    message: str | None = None  # what a failed validation says (the first failure met), whatever the action
    action: str | None = None  # the binding's action when the validation failed
    applies: bool = True  # whether any policy and binding matched the request at all
    messages: tuple[str, ...] = field(default=(), compare=False)  # of every failed evaluation
    cost: int = field(default=0, compare=False)  # of the costliest evaluation


@dataclass(frozen=True)
class Evaluation:
    failed: bool
    message: str | None
    cost: int


def admit(objects: Sequence[Mapping[str, Any]], obj: Mapping[str, Any], *, namespace: str = "team",
          operation: str = "CREATE", old: Mapping[str, Any] | None = None, subresource: str = "") -> Verdict:
    """The verdict of every policy and binding in `objects` on creating or updating `obj`."""
    kind = str(obj["kind"])
    group, version, resource = RESOURCES[kind]
    request = {"kind": {"group": group, "version": version, "kind": kind},
               "resource": {"group": group, "version": version, "resource": resource},
               "subResource": subresource, "operation": operation, "namespace": namespace,
               "name": obj.get("metadata", {}).get("name", "")}
    policies = {p["metadata"]["name"]: p for p in objects if p["kind"] == "ValidatingAdmissionPolicy"}
    configmaps = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in objects if c["kind"] == "ConfigMap"}
    failures: list[tuple[str, str]] = []
    applies, cost = False, 0
    for binding in (b for b in objects if b["kind"] == "ValidatingAdmissionPolicyBinding"):
        policy = policies.get(binding["spec"]["policyName"])
        if policy is None or not _selected(binding["spec"]["matchResources"], namespace) or not _matched(
                policy["spec"]["matchConstraints"], group, version, resource + (f"/{subresource}" * bool(subresource)),
                operation):
            continue
        applies = True
        ref = binding["spec"]["paramRef"]
        params = configmaps.get((ref["namespace"], ref["name"]))
        if params is None:
            failures.append(("failed to configure binding: no params found for policy binding with `Deny` "
                             "parameterNotFoundAction", "Deny"))
            continue
        evaluation = evaluate_policy(policy, params, obj, old, request)
        cost = max(cost, evaluation.cost)
        if evaluation.failed:
            failures.append((str(evaluation.message), binding["spec"]["validationActions"][0]))
    if not failures:
        return Verdict(True, applies=applies, cost=cost)
    message, action = failures[0]
    return Verdict(all(a != "Deny" for _, a in failures), message, action, messages=tuple(m for m, _ in failures),
                   cost=cost)


def evaluate_policy(policy: Mapping[str, Any], params: Mapping[str, Any], obj: Mapping[str, Any],
                    old: Mapping[str, Any] | None, request: Mapping[str, Any]) -> Evaluation:
    """One evaluation: the variables (their cost charged to the validation), the validation, the message."""
    activation: dict[str, Any] = {"object": celpy.json_to_cel(obj), "oldObject": celpy.json_to_cel(old),
                                  "request": celpy.json_to_cel(request), "params": _params(json.dumps(params))}
    variables: dict[celtypes.StringType, Any] = {}
    meter = Meter()
    for variable in policy["spec"]["variables"]:
        activation["variables"] = celtypes.MapType(variables)
        variables[celtypes.StringType(variable["name"])] = evaluate(variable["expression"], activation, meter)
    activation["variables"] = celtypes.MapType(variables)
    total = 0
    for validation in policy["spec"]["validations"]:
        passed = evaluate(validation["expression"], activation, meter)
        total += meter.cost
        if not passed:
            message_meter = Meter()
            message = evaluate(validation["messageExpression"], activation, message_meter)
            total += message_meter.cost
            _within_budget(total)
            return Evaluation(True, str(message), total)
        meter = Meter()
    _within_budget(total)
    return Evaluation(False, None, total)


def _within_budget(total: int) -> None:
    if total > EVALUATION_BUDGET:
        raise CELEvalError(f"validation failed due to running out of cost budget ({total})")


@cache
def _params(text: str) -> Any:
    """A params object as CEL sees it; converted once, however many requests read it."""
    return celpy.json_to_cel(json.loads(text))


def _matched(constraints: Mapping[str, Any], group: str, version: str, resource: str, operation: str) -> bool:
    return any(group in rule["apiGroups"] and version in rule["apiVersions"] and resource in rule["resources"]
               and operation in rule["operations"] for rule in constraints["resourceRules"])


def _selected(match: Mapping[str, Any], namespace: str) -> bool:
    """A namespace selector of `matchExpressions` on `kubernetes.io/metadata.name`, as the binding writes it."""
    for expression in match["namespaceSelector"]["matchExpressions"]:
        assert expression["key"] == "kubernetes.io/metadata.name"
        inside = namespace in expression["values"]
        if inside != (expression["operator"] == "In"):
            return False
    return True


# --- what an export holds ---

def params_of(objects: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The params ConfigMaps of an export, in order: not its keepalive's."""
    return [obj for obj in objects if obj["kind"] == "ConfigMap" and not _keepalive(obj)]


def own(objects: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The objects of an export but its keepalive, which every export shares by design."""
    return [obj for obj in objects if not _keepalive(obj)]


def _keepalive(obj: Mapping[str, Any]) -> bool:
    return bool(obj["metadata"].get("labels", {}).get(COMPONENT) == KEEPALIVE_COMPONENT)


# --- objects to admit ---

def pod_spec(*containers: tuple[str, str], init: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": name, "image": image} for name, image in containers]}
    if init:
        spec["initContainers"] = [{"name": name, "image": image} for name, image in init]
    return spec


def holding(kind: str, spec: Mapping[str, Any], name: str = "x") -> dict[str, Any]:
    """An object of `kind` whose every pod template is `spec` (a Ray cluster's head and one worker group)."""
    group, version, _ = RESOURCES[kind]
    template = {"metadata": {"labels": {"app": name}}, "spec": dict(spec)}
    cluster = {"headGroupSpec": {"template": template}, "workerGroupSpecs": [{"groupName": "w", "template": template}]}
    job = {"entrypoint": "python x.py", "rayClusterSpec": cluster}
    specs: dict[str, Any] = {
        "Pod": dict(spec),
        "CronJob": {"schedule": "@daily", "jobTemplate": {"spec": {"template": template}}},
        "RayCluster": cluster,
        "RayJob": job,
        "RayService": {"rayClusterConfig": cluster},
        "RayCronJob": {"schedule": "@daily", "jobTemplate": job},
        "PyTorchJob": {"pytorchReplicaSpecs": {"Master": {"template": template}, "Worker": {"template": template}}},
    }
    return {"apiVersion": f"{group}/{version}".lstrip("/"), "kind": kind, "metadata": {"name": name},
            "spec": specs.get(kind, {"template": template})}
