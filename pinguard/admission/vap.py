"""The lock as a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA in 1.30): CEL, no webhook.

Three objects, applied in this order:

- the params, ConfigMap `kube-system/<scope>`: one key per locked digest, its 64 hex
  digits (a key may not hold `:`), whose value names the lock entries it stands for;
  and for each locked index digest a key `<hex>.image` holding an RE2 pattern of every
  way to write that entry's `name:tag`, which the message uses to name the entry an
  unlocked image should have been. Updating the lock is re-applying this one object;
- the policy `pinguard-lock`, which knows nothing of any lock: Pods (and their
  `ephemeralcontainers` subresource), Deployments, StatefulSets, DaemonSets,
  ReplicaSets, Jobs, CronJobs, RayClusters, RayJobs, RayServices and PyTorchJobs are
  admitted when every container, init container and ephemeral container of every pod
  spec they hold names `…@sha256:<hex>` with `<hex>` a key of the params;
- the binding `<scope>`: the params it reads (missing params deny everything), the
  action (`Deny`, `Warn` or `Audit`) and the namespaces (`kubernetes.io/metadata.name`).

An UPDATE is judged on the images it brings: one the object already had is not
refused again, so labelling or finalizing a pod made before the policy still works,
while every new pod, and every changed image, must be locked.

The expressions keep to what both the API server's CEL and cel-python (the tests'
evaluator) implement alike: the standard macros (`has`, `all`, `exists`, `filter`,
`map`, over lists and over map keys), `in` on lists and maps, `+` on strings and
lists, `size`, `endsWith`, `matches` (RE2 in both; a partial match, so patterns are
anchored) and `string()`. Left out: the Kubernetes string extensions (`split`,
`substring`, `lastIndexOf`, `join`, `replace`), optional types (`obj.?field`,
`orValue`), `cel.bind` and two-variable comprehensions, which cel-python lacks; so a
digest is matched with `endsWith` over the params' keys rather than cut out of the
image, and a value is bound to a name by mapping over a one-element list. The API
server type-checks an expression when the policy is created (`object` and `params`
are `dyn` there): a validation must be typed `bool` and a `messageExpression`
`string`, so images and names pass through `string()`; cel-python checks nothing
before it runs. Variables are evaluated lazily by the API server and none of them can
fail on a valid object, so evaluating them eagerly (as the tests do) gives the same
answers. `params.data` is the ConfigMap's map of strings in both; a field that is not
there is an error in both, hence `has()` before each optional one.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pinguard.admission import (
    EXEMPT_NAMESPACE,
    NAME,
    PARAMS_COMPONENT,
    PARAMS_NAMESPACE,
    POLICY_COMPONENT,
    Source,
    labels,
    scope_name,
)
from pinguard.errors import InvalidReference, PinguardError
from pinguard.lockfile import LockEntry
from pinguard.reference import DOCKER_HUB, parse

API_VERSION = "admissionregistration.k8s.io/v1"
PLURALS = {"ValidatingAdmissionPolicy": "validatingadmissionpolicies",
           "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings"}
ACTIONS = {"deny": "Deny", "warn": "Warn", "audit": "Audit"}
PATTERN_SUFFIX = ".image"  # params key `<hex>.image`: how to write the entry of that index digest
_NAMESPACE_LABEL = "kubernetes.io/metadata.name"
_OPERATIONS = ["CREATE", "UPDATE"]
_RESOURCES = [  # (API group, versions, resources) whose objects hold pod specs
    ("", ["v1"], ["pods", "pods/ephemeralcontainers"]),
    ("apps", ["v1"], ["deployments", "statefulsets", "daemonsets", "replicasets"]),
    ("batch", ["v1"], ["jobs", "cronjobs"]),
    ("ray.io", ["*"], ["rayclusters", "rayjobs", "rayservices"]),
    ("kubeflow.org", ["*"], ["pytorchjobs"]),
]
_TEMPLATE_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")  # spec.template.spec
_PINNED = "^[^@]+@sha256:[0-9a-f]{64}$"
MESSAGE = ("every container, init container and ephemeral container must run an image pinned to a digest of the "
           "lock (`pinguard pin`)")


def objects(source: Source, bound: Sequence[str], mode: str) -> list[dict[str, Any]]:
    """The params, the policy and the binding, in the order they are applied."""
    scope = scope_name(bound)
    return [params(source, scope), policy(), binding(scope, bound, mode)]


def params(source: Source, scope: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": scope, "namespace": PARAMS_NAMESPACE, "labels": labels(PARAMS_COMPONENT),
                     "annotations": source.annotations()},
        "data": params_data(source),
    }


def params_data(source: Source) -> dict[str, str]:
    """`<hex>`: the entries a digest stands for; `<hex>.image`: the pattern of the entries of an index digest."""
    entries: defaultdict[str, list[str]] = defaultdict(list)
    platforms: defaultdict[str, list[str]] = defaultdict(list)
    patterns: defaultdict[str, list[str]] = defaultdict(list)
    for entry in source.lock:
        locked = f"{entry.name}:{entry.tag}@{entry.digest}"
        entries[_hex(entry.digest)].append(locked)
        patterns[_hex(entry.digest)].append(_spellings(entry, source.lockfile))
        for platform, digest in entry.platforms.items():
            platforms[_hex(digest)].append(f"{locked} ({platform})")
    data = {key: ", ".join([*sorted(entries[key]), *sorted(platforms[key])]) for key in {*entries, *platforms}}
    data.update({key + PATTERN_SUFFIX: "^(?:" + "|".join(sorted(set(found))) + ")(?:@.*)?$"
                 for key, found in patterns.items()})
    return dict(sorted(data.items()))


def _hex(digest: str) -> str:
    return digest.removeprefix("sha256:")


def _spellings(entry: LockEntry, lockfile: str) -> str:
    """An RE2 pattern of every way an image names this entry's name and tag (`nginx:1.25` is docker.io/library's)."""
    try:
        reference = parse(f"{entry.name}:{entry.tag}")  # what a valid name and tag may hold, nothing else
        if reference.tag != entry.tag or reference.digest is not None:
            raise InvalidReference(f"the tag {entry.tag!r} is no tag")
    except InvalidReference as exc:
        raise PinguardError(f"{lockfile}: {entry.name}:{entry.tag}: {exc}") from None
    name = _literal(reference.name)
    if reference.registry == DOCKER_HUB:
        official, _, short = reference.repository.partition("/")
        repository = f"(?:library/)?{_literal(short)}" if official == "library" and "/" not in short else _literal(
            reference.repository)
        name = rf"(?:(?:docker\.io|index\.docker\.io)/)?{repository}"
    tag = f":{_literal(entry.tag)}"
    return name + (f"(?:{tag})?" if entry.tag == "latest" else tag)


def _literal(text: str) -> str:
    """A name or tag matched literally by RE2 and Python's re: `.` (and an IPv6 host's brackets) escaped."""
    return re.sub(r"([^A-Za-z0-9_/:\-])", r"\\\1", text)


def policy() -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": NAME, "labels": labels(POLICY_COMPONENT)},
        "spec": {
            "failurePolicy": "Fail",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [
                {"apiGroups": [group], "apiVersions": versions, "operations": _OPERATIONS, "resources": resources}
                for group, versions, resources in _RESOURCES]},
            "variables": [{"name": name, "expression": expression} for name, expression in VARIABLES],
            "validations": [{"expression": VALIDATION, "messageExpression": MESSAGE_EXPRESSION, "message": MESSAGE,
                             "reason": "Forbidden"}],
        },
    }


def binding(scope: str, bound: Sequence[str], mode: str) -> dict[str, Any]:
    selected = {"key": _NAMESPACE_LABEL, "operator": "In", "values": list(bound)} if bound else {
        "key": _NAMESPACE_LABEL, "operator": "NotIn", "values": [EXEMPT_NAMESPACE]}
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": scope, "labels": labels(POLICY_COMPONENT)},
        "spec": {
            "policyName": NAME,
            "paramRef": {"name": scope, "namespace": PARAMS_NAMESPACE, "parameterNotFoundAction": "Deny"},
            "validationActions": [ACTIONS[mode]],
            "matchResources": {"namespaceSelector": {"matchExpressions": [selected]}},
        },
    }


# --- the CEL ---

def _ray_cluster(spec: str) -> str:
    """The pod specs of a RayClusterSpec: the head's, then each worker group's."""
    return (f"[{spec}.headGroupSpec.template.spec] + "
            f"(has({spec}.workerGroupSpecs) ? {spec}.workerGroupSpecs.map(g, g.template.spec) : [])")


def _pod_specs(root: str) -> str:
    """The pod specs `root` (`object` or `oldObject`) holds, by the kind admitted; none for any other kind."""
    kind = "request.kind.kind"
    templates = ", ".join(f"'{k}'" for k in _TEMPLATE_KINDS)
    ray_job = (f"(has({root}.spec.rayClusterSpec) ? {_ray_cluster(root + '.spec.rayClusterSpec')} : []) +\n"
               f"  (has({root}.spec.submitterPodTemplate) ? [{root}.spec.submitterPodTemplate.spec] : [])")
    replicas = f"{root}.spec.pytorchReplicaSpecs"
    return "\n".join([
        f"{kind} == 'Pod' ? [{root}.spec] :",
        f"{kind} in [{templates}] ? [{root}.spec.template.spec] :",
        f"{kind} == 'CronJob' ? [{root}.spec.jobTemplate.spec.template.spec] :",
        f"{kind} == 'RayCluster' ? {_ray_cluster(root + '.spec')} :",
        f"{kind} == 'RayJob' ? {ray_job} :",
        f"{kind} == 'RayService' ? {_ray_cluster(root + '.spec.rayClusterConfig')} :",
        f"{kind} == 'PyTorchJob' ? (has({replicas}) ? {replicas}.map(r, {replicas}[r].template.spec) : []) :",
        "[]",
    ])


_CONTAINERS = ("(has(s.initContainers) ? s.initContainers : []) + (has(s.containers) ? s.containers : []) +\n"
               "  (has(s.ephemeralContainers) ? s.ephemeralContainers : [])")
_IMAGE = "(has(c.image) ? string(c.image) : '')"
_LOCKED = (f"{_IMAGE}.matches('{_PINNED}') &&\n"
           f"    params.data.exists(k, {_IMAGE}.endsWith('@sha256:' + k))")
# The params keys of the index digests whose entry the image names (by name and tag): at most one in a valid lock.
_ENTRY_KEYS = (f"params.data.filter(k, (k + '{PATTERN_SUFFIX}') in params.data && "
               f"{_IMAGE}.matches(params.data[k + '{PATTERN_SUFFIX}']))")

VARIABLES = [
    ("specs", _pod_specs("object")),
    ("previousSpecs", f"request.operation == 'UPDATE' ? (\n{_pod_specs('oldObject')}\n) : []"),
    # One list per pod spec: its init containers, containers and ephemeral containers.
    ("containers", f"variables.specs.map(s, {_CONTAINERS})"),
    ("previousImages", f"variables.previousSpecs.map(s, ({_CONTAINERS}).map(c, {_IMAGE}))"),
    # Per pod spec, the containers whose image is not locked and was not there before the UPDATE.
    ("refused", f"variables.containers.map(l, l.filter(c,\n  !({_LOCKED}) &&\n"
                f"  !variables.previousImages.exists(p, {_IMAGE} in p)))"),
]
VALIDATION = "variables.refused.all(l, l.size() == 0)"
MESSAGE_EXPRESSION = (
    "variables.refused.filter(l, l.size() > 0).map(l, l[0]).map(c,\n"
    f"  'container ' + string(c.name) + ': image `' + {_IMAGE} + '` is not pinned to a digest of the lock; ' +\n"
    f"  [{_ENTRY_KEYS}].map(e,\n"
    "    e.size() > 0 ? 'pin it to ' + params.data[e[0]]"
    " : 'the lock has no entry for it: `pinguard lock`, then `pinguard pin`')[0]\n"
    ")[0]"
)
