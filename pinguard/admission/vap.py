"""The lock as ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1, GA in 1.30): CEL, no webhook.

The objects of one export, applied in this order (`objects`), so nothing is bound
before what it reads is there:

- what keeps the API server reading params ConfigMaps whatever else is deleted
  (`keepalive`: Kubernetes #130887);
- the params: ConfigMaps in kube-system holding the locked digests and, for each
  entry, its index digest under its name and tag (`params` says how, and how a lock
  too large for one ConfigMap is split over several);
- one policy for each group of kinds of one shape (`kinds`): Pods and their
  `ephemeralcontainers` subresource; Deployments, StatefulSets, DaemonSets,
  ReplicaSets, Jobs and ReplicationControllers; CronJobs; RayClusters; RayJobs;
  RayServices; RayCronJobs; PyTorchJobs; and each `--kind`. Each names its
  apiVersions, so the API server type-checks its expressions against the schema of
  every kind it matches (`status.typeChecking`); they select, and test with `has()`,
  only fields those schemas have;
- for each policy, a binding for each params ConfigMap, naming it (a missing one
  denies everything): the action (`Deny`, `Warn` or `Audit`) and the namespaces
  (`kubernetes.io/metadata.name`).

Every object is named after the export's scope (`pinguard-lock…` for every namespace
but kube-system, `pinguard-lock….team-a` for `--namespace team-a`), so exports of other
namespaces never share one: applying or deleting one leaves the others whole.

A container is admitted when its image is `…@sha256:<hex>` with `<hex>` a key of the
params: cut out of the image (`substring`) and looked up (`in`), at a cost that does not
grow with the lock. An UPDATE is judged on the images it brings: one the object already
had is not refused again, so labelling or finalizing a pod made before the policy still
works, while every new pod, and every changed image, must be locked. A denial names the
container, the image, and the entry it should have been pinned to: the image's name and
tag are written the one way the lock's are (`name_of`: `nginx:1.25` is
`docker.io/library/nginx:1.25`), encoded into a key (`key_of`) and looked up; params
of digests only (a lock too large to name its entries in every cell) name none, and
the denial says so rather than that the lock has no entry.

The expressions use the CEL of every API server VAP supports: the standard macros
(`has`, `all`, `exists`, `filter`, `map`), `in`, `+`, `%`, `size`, `matches` (RE2, a
partial match, so patterns are anchored), `int`, and the Kubernetes library's
`substring`, `indexOf`, `split`, `replace`, `lowerAscii` and `sum`. No `cel.bind`,
optional types or two-variable comprehensions: a value is bound to a name by mapping
over a list of one. Every expression is total: no image, however malformed, makes one
fail (`indexOf` fails on an empty string on some versions: it is only reached with a
string that holds what it looks for). The type checker names an object's type by
where it is in the schema, and a list holds one type: so a container is carried as
`[name, image]` (init, regular and ephemeral containers are three types), and each
pod spec becomes its containers where it is found.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pinguard.admission import keepalive
from pinguard.admission.objects import (
    EXEMPT_NAMESPACE,
    LAYOUT_LABEL,
    NAME,
    PARAMS_COMPONENT,
    PARAMS_NAMESPACE,
    POLICY_COMPONENT,
    Source,
    labels,
    object_name,
)
from pinguard.admission.params import CLASS, CLASSES, FROM, KEY_ESCAPES, NAME_ALPHABET, OMITTED, TO, Cell, cells
from pinguard.admission.workloads import BUILT_IN, EACH_ITEM, KindGroup, PodSpecPath

API_VERSION = "admissionregistration.k8s.io/v1"
PLURALS = {"ValidatingAdmissionPolicy": "validatingadmissionpolicies",
           "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings"}
ACTIONS = {"deny": "Deny", "warn": "Warn", "audit": "Audit"}
_NAMESPACE_LABEL = "kubernetes.io/metadata.name"
_OPERATIONS = ["CREATE", "UPDATE"]
PINNED = "^[^@]+@sha256:[0-9a-f]{64}$"
MESSAGE = ("every container, init container and ephemeral container must run an image pinned to a digest of the "
           "lock (`pinguard pin`)")
NO_ENTRY = "the lock has no entry for it: `pinguard lock`, then `pinguard pin`"
# Params of digests only name no entry: whether the lock has one is not known here.
UNNAMED = "pin it with `pinguard pin` (after `pinguard lock` if the lock has no entry for it)"


def objects(source: Source, bound: Sequence[str], mode: str, kinds: Sequence[KindGroup] = ()) -> list[dict[str, Any]]:
    """The params, the policies and their bindings, in the order they are applied: nothing is bound before it is
    there to read."""
    found = cells(source)
    groups = (*BUILT_IN, *kinds)
    return [*keepalive.objects(), *(params(source, cell, bound) for cell in found),
            *(policy(group, bound) for group in groups),
            *(binding(group, cell, bound, mode) for group in groups for cell in found)]


def params(source: Source, cell: Cell, bound: Sequence[str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": _name(NAME, cell, bound), "namespace": PARAMS_NAMESPACE,
                     "labels": {**labels(PARAMS_COMPONENT, bound), LAYOUT_LABEL: str(cell.layout)},
                     "annotations": source.annotations()},
        "data": cell.data,
    }


def policy(group: KindGroup, bound: Sequence[str]) -> dict[str, Any]:
    rules: dict[tuple[str, str], list[str]] = {}
    for resource in group.resources:
        rules.setdefault((resource.group, resource.version), []).append(resource.plural)
    rules[group.resources[0].group, group.resources[0].version] += [
        f"{group.resources[0].plural}/{sub}" for sub in group.subresources]
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": object_name(_policy(group), bound), "labels": labels(POLICY_COMPONENT, bound)},
        "spec": {
            "failurePolicy": "Fail",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [
                {"apiGroups": [api_group], "apiVersions": [version], "operations": _OPERATIONS, "resources": plurals}
                for (api_group, version), plurals in rules.items()]},
            "variables": [{"name": name, "expression": expression} for name, expression in variables(group)],
            "validations": [{"expression": VALIDATION, "messageExpression": MESSAGE_EXPRESSION, "message": MESSAGE,
                             "reason": "Forbidden"}],
        },
    }


def binding(group: KindGroup, cell: Cell, bound: Sequence[str], mode: str) -> dict[str, Any]:
    selected = {"key": _NAMESPACE_LABEL, "operator": "In", "values": list(bound)} if bound else {
        "key": _NAMESPACE_LABEL, "operator": "NotIn", "values": [EXEMPT_NAMESPACE]}
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": _name(_policy(group), cell, bound),
                     "labels": {**labels(POLICY_COMPONENT, bound), LAYOUT_LABEL: str(cell.layout)}},
        "spec": {
            "policyName": object_name(_policy(group), bound),
            "paramRef": {"name": _name(NAME, cell, bound), "namespace": PARAMS_NAMESPACE,
                         "parameterNotFoundAction": "Deny"},
            "validationActions": [ACTIONS[mode]],
            "matchResources": {"namespaceSelector": {"matchExpressions": [selected]}},
        },
    }


def _policy(group: KindGroup) -> str:
    return f"{NAME}-{group.id}"


def _name(first: str, cell: Cell, bound: Sequence[str]) -> str:
    """The name of a cell's params (`first` is NAME) or binding (the policy's): the cell's place after `first`."""
    return object_name(f"{first}-{cell.id}" if cell.id else first, bound)


# --- the CEL ---

def _let(value: str, name: str, body: str) -> str:
    """`body` with `name` bound to `value`, in the CEL of every version: a map over a list of one."""
    return f"[{value}].map({name}, {body})[0]"


def _guard(base: str, fields: Sequence[str]) -> str:
    """Whether `base` has each field of the chain `fields`: `has()` on every one, since each may be absent."""
    return " && ".join(f"has({'.'.join((base, *fields[:depth]))})" for depth in range(1, len(fields) + 1))


def _under(base: str, fields: Sequence[str]) -> str:
    return ".".join((base, *fields))


def _containers(spec: str) -> str:
    """Every container of pod spec `spec` as `[name, image]` (no image: '')."""
    return " + ".join(f"(has({spec}.{field}) ? {spec}.{field}.map(c, [c.name, has(c.image) ? c.image : '']) : [])"
                      for field in ("initContainers", "containers", "ephemeralContainers"))


def _at(path: PodSpecPath, root: str) -> str:
    """For each pod spec at `path` in `root` (`object` or `oldObject`), its containers; nothing where a field is
    absent. Each pod spec becomes its containers where it is found: pod specs at two paths are two types to the
    type checker (it names an object's type by where it is), and a list holds one type."""
    found = _under(root, path.fields)
    if not path.each:
        return f"({_guard(root, path.fields)} ? [{_containers(found)}] : [])"
    if path.each == EACH_ITEM:
        items, variable, value = f"({_guard(root, path.fields)} ? {found} : [])", "x", "x"
    else:  # EACH_VALUE: the map's keys, each value found by its key
        items, variable, value = found, "k", f"{found}[k]"
    present = f".filter({variable}, {_guard(value, path.rest)})" if path.rest else ""
    each = f"{items}{present}.map({variable}, {_containers(_under(value, path.rest))})"
    return each if path.each == EACH_ITEM else f"({_guard(root, path.fields)} ? {each} : [])"


def _containers_of(group: KindGroup, root: str) -> str:
    return " +\n".join(_at(path, root) for path in group.paths)


def name_of(image: str) -> str:
    """`name:tag` of `image` the way `params.entry_name` writes an entry's, whatever the image: the digest cut off,
    the tag `latest` when there is none, the registry `docker.io` when the first part names no host (docker's rule:
    no `.`, `:` or capital, and not `localhost`), `index.docker.io` read as `docker.io`, and `library/` before a
    Docker Hub name of one part."""
    whole = ("registry + '/' + (registry == 'docker.io' && !path.contains('/') ? 'library/' + path : path) + "
             "':' + tag")
    host = ("name.contains('/') && (first.contains('.') || first.contains(':') || first == 'localhost' || "
            "first.lowerAscii() != first)")
    body = _let("host ? name.substring(first.size() + 1) : name", "path", whole)
    body = _let("host ? (first == 'index.docker.io' ? 'docker.io' : first) : 'docker.io'", "registry", body)
    body = _let(host, "host", body)
    body = _let("name.split('/')[0]", "first", body)
    body = _let("last.contains(':') ? last.substring(last.indexOf(':') + 1) : 'latest'", "tag", body)
    body = _let("last.contains(':') ? ref.substring(0, ref.size() - last.size() + last.indexOf(':')) : ref", "name",
                body)
    body = _let("parts[parts.size() - 1]", "last", body)
    body = _let("ref.split('/')", "parts", body)
    return _let(f"{image}.split('@')[0]", "ref", body)


def key_of(name: str) -> str:
    """The params key of `name`, as `params.key` writes it."""
    return name + "".join(f".replace('{char}', '{escape}')" for char, escape in KEY_ESCAPES)


def _name_class(name: str) -> str:
    return f"{name}.split('').map(ch, '{NAME_ALPHABET}'.indexOf(ch) + 1).sum() % variables.nameClasses"


def _passes(image: str) -> str:
    """Whether this cell lets the image through by its digest: pinned, and its digest locked or in another range."""
    digest = ("d.substring(0, 2) < variables.digestsFrom || d.substring(0, 2) > variables.digestsTo || "
              "d in params.data")
    return f"{image}.matches('{PINNED}') && {_let(f'{image}.substring({image}.size() - 64)', 'd', digest)}"


def _judged_here(image: str) -> str:
    """Whether this cell is the one that judges an image it does not let through: the cell of its name's class and
    of its digest's range, or of the first range when it has no digest."""
    return (f"({image}.matches('{PINNED}') || variables.digestsFrom == '00') &&\n"
            f"    {_let(name_of(image), 'n', _name_class('n'))} == variables.nameClass")


def variables(group: KindGroup) -> list[tuple[str, str]]:
    return [
        # One list per pod spec: its init containers, containers and ephemeral containers, as [name, image].
        ("containers", _containers_of(group, "object")),
        ("previousImages", f"request.operation == 'UPDATE' ? (\n{_containers_of(group, 'oldObject')}\n"
                           ").map(l, l.map(c, c[1])) : []"),
        ("digestsFrom", f"params.data['{FROM}']"),
        ("digestsTo", f"params.data['{TO}']"),
        ("nameClass", f"int(params.data['{CLASS}'])"),
        ("nameClasses", f"int(params.data['{CLASSES}'])"),
        # Per pod spec, the containers whose image this cell does not let through and that the object did not
        # already have before the UPDATE; then those of them this cell judges.
        ("unlocked", "variables.containers.map(l, l.filter(c,\n"
                     f"  !({_passes('c[1]')}) &&\n  !variables.previousImages.exists(p, c[1] in p)))"),
        ("refused", f"variables.unlocked.map(l, l.filter(c,\n  {_judged_here('c[1]')}))"),
    ]


VALIDATION = "variables.refused.all(l, l.size() == 0)"
_DENIAL = ("'container ' + c[0] + ': image `' + c[1] + '` is not pinned to a digest of the lock; ' +\n"
           f"  (k in params.data ? 'pin it to ' + n + '@sha256:' + params.data[k] :\n"
           f"   '{OMITTED}' in params.data ? '{UNNAMED}' : '{NO_ENTRY}')")
MESSAGE_EXPRESSION = (
    "variables.refused.filter(l, l.size() > 0).map(l, l[0]).map(c,\n"
    f"  {_let(name_of('c[1]'), 'n', _let(key_of('n'), 'k', _DENIAL))}\n"
    ")[0]"
)
