"""The exported ValidatingAdmissionPolicy judged as the API server judges a request, its CEL run by cel-python.

`admit` does what the admission plugin does for one request: the policy's
`matchConstraints` and the binding's namespace selector decide whether it applies;
then the variables are evaluated (in order, each seeing the ones before), then the
validation, then on failure the `messageExpression`; the binding's action says what a
failure does. A CEL error is raised: the API server would deny the request
(`failurePolicy: Fail`), and no object here should make one.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import celpy
from celpy import celtypes

ENV = celpy.Environment()

# kind -> (API group, version, resource), for every kind the policy is meant to hold
RESOURCES = {
    "Pod": ("", "v1", "pods"),
    "Deployment": ("apps", "v1", "deployments"),
    "StatefulSet": ("apps", "v1", "statefulsets"),
    "DaemonSet": ("apps", "v1", "daemonsets"),
    "ReplicaSet": ("apps", "v1", "replicasets"),
    "Job": ("batch", "v1", "jobs"),
    "CronJob": ("batch", "v1", "cronjobs"),
    "RayCluster": ("ray.io", "v1", "rayclusters"),
    "RayJob": ("ray.io", "v1", "rayjobs"),
    "RayService": ("ray.io", "v1", "rayservices"),
    "PyTorchJob": ("kubeflow.org", "v1", "pytorchjobs"),
}


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    message: str | None = None  # what a failed validation says, whatever the action
    action: str | None = None  # the binding's action when the validation failed
    applies: bool = True  # whether the policy and binding matched the request at all


def evaluate(expression: str, activation: Mapping[str, Any]) -> Any:
    """One CEL expression; an error is raised, as a failed expression fails the request."""
    result = ENV.program(ENV.compile(expression)).evaluate(dict(activation))
    if isinstance(result, celpy.CELEvalError):
        raise result
    return result


def admit(objects: Sequence[Mapping[str, Any]], obj: Mapping[str, Any], *, namespace: str = "team",
          operation: str = "CREATE", old: Mapping[str, Any] | None = None, subresource: str = "") -> Verdict:
    """The verdict of the policy in `objects` (params, policy, binding) on creating or updating `obj`."""
    params, policy, binding = objects
    kind = str(obj["kind"])
    group, version, resource = RESOURCES[kind]
    if not _matched(policy["spec"]["matchConstraints"], group, resource + (f"/{subresource}" if subresource else ""),
                    operation) or not _selected(binding["spec"]["matchResources"], namespace):
        return Verdict(True, applies=False)
    request = {"kind": {"group": group, "version": version, "kind": kind},
               "resource": {"group": group, "version": version, "resource": resource},
               "subResource": subresource, "operation": operation, "namespace": namespace,
               "name": obj.get("metadata", {}).get("name", "")}
    activation: dict[str, Any] = {name: celpy.json_to_cel(value) for name, value in (
        ("object", obj), ("oldObject", old), ("request", request), ("params", params))}
    variables: dict[celtypes.StringType, Any] = {}
    for variable in policy["spec"]["variables"]:
        activation["variables"] = celtypes.MapType(variables)
        variables[celtypes.StringType(variable["name"])] = evaluate(variable["expression"], activation)
    activation["variables"] = celtypes.MapType(variables)
    for validation in policy["spec"]["validations"]:
        if not evaluate(validation["expression"], activation):
            message = str(evaluate(validation["messageExpression"], activation))
            actions = binding["spec"]["validationActions"]
            return Verdict("Deny" not in actions, message, actions[0])
    return Verdict(True)


def _matched(constraints: Mapping[str, Any], group: str, resource: str, operation: str) -> bool:
    return any(group in rule["apiGroups"] and resource in rule["resources"] and operation in rule["operations"]
               for rule in constraints["resourceRules"])


def _selected(match: Mapping[str, Any], namespace: str) -> bool:
    """A namespace selector of `matchExpressions` on `kubernetes.io/metadata.name`, as the binding writes it."""
    for expression in match["namespaceSelector"]["matchExpressions"]:
        assert expression["key"] == "kubernetes.io/metadata.name"
        inside = namespace in expression["values"]
        if inside != (expression["operator"] == "In"):
            return False
    return True


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
    specs: dict[str, Any] = {
        "Pod": dict(spec),
        "CronJob": {"schedule": "@daily", "jobTemplate": {"spec": {"template": template}}},
        "RayCluster": cluster,
        "RayJob": {"entrypoint": "python x.py", "rayClusterSpec": cluster},
        "RayService": {"rayClusterConfig": cluster},
        "PyTorchJob": {"pytorchReplicaSpecs": {"Master": {"template": template}, "Worker": {"template": template}}},
    }
    return {"apiVersion": f"{group}/{version}".lstrip("/"), "kind": kind, "metadata": {"name": name},
            "spec": specs.get(kind, {"template": template})}
