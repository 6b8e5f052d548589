"""The lock as a Kyverno ClusterPolicy: validate only, the locked digests inline.

One rule per kind of object, each a `foreach` over every container, init container
and ephemeral container of the pod specs it holds, denying any whose image is not
`…@sha256:<hex>` with a locked digest: the image is cut down to its digest with
`regex_replace_all` (nothing when it is not pinned) and the condition is `AnyNotIn` the
list. The Pod rule matches Pods alone, so Kyverno generates its own rules for
Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, ReplicaSets and
ReplicationControllers from it (autogen). Autogen knows nothing of custom resources:
RayCluster, RayJob, RayService and PyTorchJob have rules of their own, and so has the
`Pod/ephemeralcontainers` subresource, apart so as not to turn autogen off.

`deny` enforces (`failureAction: Enforce`); `warn` admits and returns the message as
a warning (`Audit` with `emitWarning`); `audit` admits and reports (`Audit`).
Updating the lock is exporting and applying the policy again.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pinguard.admission import EXEMPT_NAMESPACE, NAME, POLICY_COMPONENT, Source, labels

API_VERSION = "kyverno.io/v1"
# The image cut down to `sha256:<hex>` when it is pinned so and nothing else, else to "".
DIGEST_OF_IMAGE = "{{ regex_replace_all('^[^@]+@(sha256:[0-9a-f]{64})$|^.*$', element.image, '$1') }}"
MESSAGE = ("image {{ element.image }} is not pinned to a digest of the lock: every container, init container and "
           "ephemeral container must be (`pinguard pin`)")
_CONTAINERS = "[ephemeralContainers, initContainers, containers]"  # of a pod spec; lists that are not there drop out


def _containers(specs: str) -> str:
    """Every container of the pod specs a JMESPath list expression gives."""
    return f"{specs}[].{_CONTAINERS}[][]"


def _ray_cluster(spec: str) -> str:
    """The pod specs of a RayClusterSpec (the head's, each worker group's), as a JMESPath list."""
    return f"[{spec}.headGroupSpec.template.spec, {spec}.workerGroupSpecs[].template.spec][]"


# (rule name, kind, the JMESPath list of containers `foreach` goes over)
RULES = [
    # Kyverno's own spelling for Pods: autogen rewrites `request.object.spec` for each controller.
    ("pods", "Pod", f"request.object.spec.{_CONTAINERS}[]"),
    ("pod-ephemeral-containers", "Pod/ephemeralcontainers", "request.object.spec.ephemeralContainers"),
    ("ray-clusters", "RayCluster", _containers(_ray_cluster("request.object.spec"))),
    ("ray-jobs", "RayJob", _containers(f"[{_ray_cluster('request.object.spec.rayClusterSpec')}, "
                                       "request.object.spec.submitterPodTemplate.spec][]")),
    ("ray-services", "RayService", _containers(_ray_cluster("request.object.spec.rayClusterConfig"))),
    ("pytorch-jobs", "PyTorchJob", _containers("values(request.object.spec.pytorchReplicaSpecs)[].template.spec")),
]


def objects(source: Source, bound: Sequence[str], mode: str) -> list[dict[str, Any]]:
    digests = sorted(source.digests())
    spec: dict[str, Any] = {"background": True}
    if mode == "warn":
        spec["emitWarning"] = True
    spec["rules"] = [_rule(name, kind, containers, digests, bound, mode) for name, kind, containers in RULES]
    return [{
        "apiVersion": API_VERSION,
        "kind": "ClusterPolicy",
        "metadata": {
            "name": NAME,
            "labels": labels(POLICY_COMPONENT),
            "annotations": {
                **source.annotations(),
                "policies.kyverno.io/title": "Images pinned to the lock",
                "policies.kyverno.io/description": f"Admits only images pinned to a digest of {source.lockfile}.",
            },
        },
        "spec": spec,
    }]


def _rule(name: str, kind: str, containers: str, digests: list[str], bound: Sequence[str], mode: str) -> dict[str, Any]:
    resources: dict[str, Any] = {"kinds": [kind], **({"namespaces": list(bound)} if bound else {})}
    rule: dict[str, Any] = {"name": name, "match": {"any": [{"resources": resources}]}}
    if not bound:
        rule["exclude"] = {"any": [{"resources": {"namespaces": [EXEMPT_NAMESPACE]}}]}
    rule["validate"] = {
        "failureAction": "Enforce" if mode == "deny" else "Audit",
        "message": MESSAGE,
        "foreach": [{
            "list": containers,
            "deny": {"conditions": {"any": [{"key": DIGEST_OF_IMAGE, "operator": "AnyNotIn", "value": digests}]}},
        }],
    }
    return rule
