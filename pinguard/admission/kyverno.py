"""The lock as a Kyverno ClusterPolicy: validate only, the locked digests inline, once.

One rule matches every kind that holds pod specs (`kinds`: Pods and their
`Pod/ephemeralcontainers` subresource, the workload controllers, CronJobs, KubeRay's
and Kubeflow's kinds, and each `--kind`) by name, so nothing rests on autogen (which
knows no custom resource). Its `foreach` goes over every container, init container and
ephemeral container of every pod spec found at any of the kinds' paths (a path an
object does not have finds nothing) and denies any whose image is not
`…@sha256:<hex>` with a locked digest: the image is cut down to its digest with
`regex_replace_all` (nothing when it is not pinned) and the condition is `AnyNotIn` the
list, written once.

`deny` enforces (`failureAction: Enforce`); `warn` admits and returns the message as
a warning (`Audit` with `emitWarning`); `audit` admits and reports (`Audit`).
Updating the lock is exporting and applying the policy again. The policy is named after
the namespaces it binds, as the VAP objects are. A lock whose policy would not fit in
an object (`MAX_POLICY` of JSON, under etcd's 1.5 MiB) is refused, with its size.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pinguard.admission.objects import EXEMPT_NAMESPACE, NAME, POLICY_COMPONENT, Source, labels, object_name
from pinguard.admission.workloads import BUILT_IN, EACH_ITEM, KindGroup, PodSpecPath
from pinguard.errors import PinguardError

API_VERSION = "kyverno.io/v1"
# The image cut down to `sha256:<hex>` when it is pinned so and nothing else, else to "".
DIGEST_OF_IMAGE = "{{ regex_replace_all('^[^@]+@(sha256:[0-9a-f]{64})$|^.*$', element.image, '$1') }}"
MESSAGE = ("image {{ element.image }} is not pinned to a digest of the lock: every container, init container and "
           "ephemeral container must be (`pinguard pin`)")
RULE = "images-pinned-to-the-lock"
# Bytes of the policy's JSON, as etcd stores a custom resource: at most 1.5 MiB an object, with its metadata, its
# managedFields (the digest list is atomic: one entry) and Kyverno's status, which the rest leaves room for.
MAX_POLICY = 1280 * 1024
_ETCD_LIMIT = 1536 * 1024
_CONTAINERS = "[ephemeralContainers, initContainers, containers]"  # of a pod spec; lists that are not there drop out


def _pod_specs(path: PodSpecPath) -> str:
    """The JMESPath of the pod specs at `path` in the object: one, or a list of them."""
    fields = ".".join(("request.object", *path.fields))
    rest = "".join(f".{name}" for name in path.rest)
    if not path.each:
        return fields
    if path.each == EACH_ITEM:
        return f"{fields}[]{rest}"
    return f"values({fields} || `{{}}`)[]{rest}"  # EACH_VALUE: values() of nothing would be an error


def containers(groups: Sequence[KindGroup]) -> str:
    """The JMESPath list of every container of every pod spec at any path of `groups`."""
    paths = dict.fromkeys(_pod_specs(path) for group in groups for path in group.paths)
    return f"[{', '.join(paths)}][].{_CONTAINERS}[][]"


def kinds(groups: Sequence[KindGroup]) -> list[str]:
    """The kinds the rule matches: `group/version/Kind` for a custom resource, as Kyverno names them."""
    found = []
    for group in groups:
        for resource in group.resources:
            custom = group not in BUILT_IN
            found.append(f"{resource.group}/{resource.version}/{resource.kind}" if custom else resource.kind)
        found += [f"{group.resources[0].kind}/{sub}" for sub in group.subresources]
    return found


def objects(source: Source, bound: Sequence[str], mode: str, custom: Sequence[KindGroup] = ()) -> list[dict[str, Any]]:
    groups = (*BUILT_IN, *custom)
    spec: dict[str, Any] = {"background": True}
    if mode == "warn":
        spec["emitWarning"] = True
    spec["rules"] = [_rule(groups, sorted(source.digests()), bound, mode)]
    policy = {
        "apiVersion": API_VERSION,
        "kind": "ClusterPolicy",
        "metadata": {
            "name": object_name(NAME, bound),
            "labels": labels(POLICY_COMPONENT, bound),
            "annotations": {
                **source.annotations(),
                "policies.kyverno.io/title": "Images pinned to the lock",
                "policies.kyverno.io/description": f"Admits only images pinned to a digest of {source.lockfile}.",
            },
        },
        "spec": spec,
    }
    size = len(json.dumps(policy).encode())
    if size > MAX_POLICY:
        raise PinguardError(f"{source.lockfile}: its {len(source.digests())} digests make a Kyverno policy of {size} "
                            f"bytes, more than the {MAX_POLICY} pinguard writes (etcd stores at most {_ETCD_LIMIT} "
                            "bytes an object): use `--format vap`, which splits the digests over ConfigMaps")
    return [policy]


def _rule(groups: Sequence[KindGroup], digests: list[str], bound: Sequence[str], mode: str) -> dict[str, Any]:
    resources: dict[str, Any] = {"kinds": kinds(groups), **({"namespaces": list(bound)} if bound else {})}
    rule: dict[str, Any] = {"name": RULE, "match": {"any": [{"resources": resources}]}}
    if not bound:
        rule["exclude"] = {"any": [{"resources": {"namespaces": [EXEMPT_NAMESPACE]}}]}
    rule["validate"] = {
        "failureAction": "Enforce" if mode == "deny" else "Audit",
        "message": MESSAGE,
        "foreach": [{
            "list": containers(groups),
            "deny": {"conditions": {"any": [{"key": DIGEST_OF_IMAGE, "operator": "AnyNotIn", "value": digests}]}},
        }],
    }
    return rule
