"""pinguard's admission bindings in a cluster, judged for `audit`: params that are missing, the keepalive gone.

A binding labelled `app.kubernetes.io/managed-by: pinguard` whose `paramRef` names a
ConfigMap that does not exist denies every pod it matches ("no params found for policy
binding with `Deny` parameterNotFoundAction"): its export's ConfigMaps were deleted and
it was not, or it was applied without them. And where pinguard's bindings are but its
keepalive binding is not, deleting the last of them stops the API server reading params
until it restarts (Kubernetes #130887: `pinguard.admission.keepalive`).

Bindings are cluster-wide: they are judged whatever namespace `audit` reads pods in. What
the server serves is read as hostile: a binding of any shape is judged, or passed over,
without failing.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, Protocol

from pinguard import untrusted_text
from pinguard.admission import keepalive
from pinguard.admission.objects import MANAGED_BY

KIND = "ValidatingAdmissionPolicyBinding"
SELECTOR = f"{MANAGED_BY[0]}={MANAGED_BY[1]}"


class Problem(NamedTuple):
    """One thing wrong with pinguard's bindings: `admission-params` or `admission-keepalive`."""

    binding: str
    problem: str
    message: str

    def __str__(self) -> str:
        return f"{KIND} {untrusted_text.shown(self.binding)}: {self.message} [{self.problem}]"

    def to_json(self) -> dict[str, str]:
        return self._asdict()


class Checked(NamedTuple):
    bindings: int  # pinguard's bindings found
    problems: list[Problem]


class Cluster(Protocol):
    """What judging needs of the API (`cluster.Kube`)."""

    def listed(self, kind: str, namespace: str | None = None, selector: str | None = None) -> list[dict[str, Any]]:
        ...

    def has_config_map(self, namespace: str, name: str) -> bool: ...


def check(cluster: Cluster) -> Checked:
    """pinguard's bindings listed, the ConfigMaps they name read (each once), and what is wrong with them."""
    found = cluster.listed(KIND, selector=SELECTOR)
    wanted = {params for params in map(_params, found) if params is not None}
    missing = {params for params in sorted(wanted) if not cluster.has_config_map(*params)}
    return Checked(len(found), problems(found, missing))


def problems(found: Iterable[Mapping[str, Any]], missing: set[tuple[str, str]]) -> list[Problem]:
    """Each binding whose params are `missing` (namespace, name), then the keepalive, when bindings need it."""
    found = list(found)
    reported = []
    for body in found:
        params = _params(body)
        if params in missing:
            where = "/".join(map(untrusted_text.shown, params or ()))
            reported.append(Problem(_name(body), "admission-params", f"its params, ConfigMap {where}, do not exist: "
                                    "every pod it matches is denied; apply its export again"))
    if found and keepalive.NAME not in map(_name, found):
        reported.append(Problem(keepalive.NAME, "admission-keepalive", "missing: once pinguard's last binding is "
                                "deleted, the API server stops reading params until it restarts (Kubernetes "
                                "#130887); apply an export again"))
    return reported


def _name(body: Mapping[str, Any]) -> str:
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) else ""


def _params(body: Mapping[str, Any]) -> tuple[str, str] | None:
    """(namespace, name) of the ConfigMap a binding must find, or it denies; None when it names none, or allows."""
    spec = body.get("spec")
    ref = spec.get("paramRef") if isinstance(spec, Mapping) else None
    if not isinstance(ref, Mapping) or ref.get("parameterNotFoundAction") == "Allow":
        return None
    namespace, name = ref.get("namespace"), ref.get("name")
    return (namespace, name) if isinstance(namespace, str) and isinstance(name, str) and namespace and name else None
