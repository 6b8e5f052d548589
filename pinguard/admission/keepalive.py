"""The objects that keep the API server reading params ConfigMaps, whatever else is deleted.

Kubernetes 1.30 to 1.36 (issues #130887 and #133827, unfixed in any release) stop an API
server's informer for a policy's `paramKind` as soon as no ValidatingAdmissionPolicyBinding
uses it for one refresh (about a second), and never start it again until that server
restarts. Deleting an export and applying it anew, or deleting the bindings before applying
a new lock, then leaves a server that denies every pod ("no params found for policy binding
with `Deny` parameterNotFoundAction") or judges by the previous lock's digests while etcd
holds the new ones.

So every export carries a policy and binding of pinguard's own that use a ConfigMap as their
params and judge nothing: the binding never goes, so the informer never stops. They are the
same for every export (one name, no scope), named apart from the export's (`pinguard-keepalive`,
not `pinguard-lock…`) and labelled without its scope, so no delete pinguard performs or prints,
all of which select a scope, removes them. Their policy matches only its own ConfigMap's kind in
a namespace no cluster has, and its one validation is `true`: it can deny nothing.
"""
from __future__ import annotations

from typing import Any

from pinguard.admission.objects import COMPONENT, KEEPALIVE_COMPONENT, MANAGED_BY, PARAMS_NAMESPACE

NAME = "pinguard-keepalive"
API_VERSION = "admissionregistration.k8s.io/v1"
NOWHERE = "pinguard-keepalive-matches-nothing"  # the namespace its binding selects: none is named so
_LABELS = {MANAGED_BY[0]: MANAGED_BY[1], COMPONENT: KEEPALIVE_COMPONENT}


def objects() -> list[dict[str, Any]]:
    """The ConfigMap, the policy and its binding, in the order they are applied."""
    metadata = {"name": NAME, "labels": dict(_LABELS)}
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**metadata, "namespace": PARAMS_NAMESPACE},
         "data": {"purpose": "keeps the API server reading params ConfigMaps (Kubernetes #130887)"}},
        {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": metadata, "spec": {
            "failurePolicy": "Ignore",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                    "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "validations": [{"expression": "true"}]}},
        {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": metadata, "spec": {
            "policyName": NAME,
            "paramRef": {"name": NAME, "namespace": PARAMS_NAMESPACE, "parameterNotFoundAction": "Allow"},
            "validationActions": ["Audit"],
            "matchResources": {"namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [NOWHERE]}]}}}},
    ]
