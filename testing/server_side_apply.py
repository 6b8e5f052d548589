"""Server-side apply for the FAKE Kubernetes API server (`testing.fake_kube`): field ownership, merge, conflicts.

An implementation of the API server's server-side apply (structured-merge-diff) on
plain JSON objects, as far as ConfigMaps and admission policies and bindings need it:

- a manager owns the fields it applied, each a leaf: a scalar, a list (lists are
  atomic here, as `validations` and `resourceRules` items are replaced whole by any
  apply that names them), an empty map, or a key of a map (`data`, `labels`); the
  identity (`apiVersion`, `kind`, `metadata.name`, `metadata.namespace`) and what the
  server sets are no one's;
- applying a field another manager owns with another value is a conflict, refused
  with the API server's wording (`Apply failed with 1 conflict: conflict with
  "kubectl": .spec.matchConstraints`) unless forced, which moves the field to the
  applier; the same value makes both owners;
- a field the applier owned and no longer applies, which no other manager owns, is
  removed, with the maps it leaves empty;
- ownership is served as `metadata.managedFields` (`FieldsV1`, operation `Apply`).
"""
from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

Path = tuple[str, ...]
Owners = dict[str, frozenset[Path]]  # manager -> the fields it owns
APPLIED_AT = "2026-11-30T06:00:00Z"
_IDENTITY = {("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace")}
SERVER_SET = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")  # metadata no one applies
_ABSENT = object()


class Conflict(NamedTuple):
    manager: str
    path: Path


class Conflicts(Exception):
    """An apply refused: the fields other managers own with other values."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        super().__init__(_message(conflicts))


def fields(obj: Mapping[str, Any]) -> frozenset[Path]:
    """The fields an object sets, as ownership counts them: leaves and map keys, not identity nor server-set."""
    return frozenset(path for path in _leaves(obj, ()) if path not in _IDENTITY
                     and not (len(path) == 2 and path[0] == "metadata" and path[1] in SERVER_SET))


def apply(live: Mapping[str, Any] | None, owners: Owners, config: Mapping[str, Any], manager: str,
          force: bool) -> tuple[dict[str, Any], Owners]:
    """The object and its owners after `manager` applies `config` to `live` (None: none yet); raises Conflicts."""
    current = copy.deepcopy(dict(live or {}))
    applied = fields(config)
    conflicts = sorted(Conflict(other, path) for other, owned in owners.items() if other != manager
                       for path in owned & applied if _at(current, path) != _at(config, path))
    if conflicts and not force:
        raise Conflicts(conflicts)
    taken = {conflict.path for conflict in conflicts}
    after = {other: owned - taken for other, owned in owners.items() if other != manager}
    after[manager] = applied
    kept = frozenset().union(*after.values())
    for path in owners.get(manager, frozenset()) - kept:
        _remove(current, path, kept)
    for path in sorted(applied | _IDENTITY):
        value = _at(config, path)
        if value is not _ABSENT:
            _set(current, path, copy.deepcopy(value))
    return current, {who: owned for who, owned in after.items() if owned}


def managed_fields(owners: Owners, api_version: str) -> list[dict[str, Any]]:
    """`metadata.managedFields` as the API server serves it, one `Apply` entry a manager."""
    return [{"manager": manager, "operation": "Apply", "apiVersion": api_version, "time": APPLIED_AT,
             "fieldsType": "FieldsV1", "fieldsV1": _fields_v1(owned)} for manager, owned in sorted(owners.items())]


def spelled(path: Path) -> str:
    """A field path as the API server writes it in a conflict: `.spec.matchConstraints`."""
    return "".join(f".{step}" for step in path)


def _leaves(value: Any, path: Path) -> Iterator[Path]:
    if isinstance(value, Mapping) and value:
        for key, child in value.items():
            yield from _leaves(child, (*path, str(key)))
    elif path:
        yield path


def _at(obj: Any, path: Path) -> Any:
    for step in path:
        if not isinstance(obj, Mapping) or step not in obj:
            return _ABSENT
        obj = obj[step]
    return obj


def _set(obj: dict[str, Any], path: Path, value: Any) -> None:
    for step in path[:-1]:
        if not isinstance(obj.get(step), dict):
            obj[step] = {}
        obj = obj[step]
    obj[path[-1]] = value


def _remove(obj: dict[str, Any], path: Path, kept: frozenset[Path]) -> None:
    """Remove the field at `path`, then each map above it left empty that no one owns as a leaf."""
    parents = [obj]
    for step in path[:-1]:
        child = parents[-1].get(step)
        if not isinstance(child, dict):
            return
        parents.append(child)
    parents[-1].pop(path[-1], None)
    for depth in range(len(path) - 1, 0, -1):
        if parents[depth] or path[:depth] in kept:
            return
        del parents[depth - 1][path[depth - 1]]


def _fields_v1(owned: frozenset[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(owned):
        node = tree
        for step in path:
            node = node.setdefault(f"f:{step}", {})
    return tree


def _message(conflicts: list[Conflict]) -> str:
    """The API server's words for refused fields (k8s.io/apiserver fieldmanager `NewConflictError`)."""
    if len(conflicts) == 1:
        return f'Apply failed with 1 conflict: conflict with "{conflicts[0].manager}": {spelled(conflicts[0].path)}'
    lines = []
    for manager in sorted({conflict.manager for conflict in conflicts}):
        lines.append(f'conflicts with "{manager}":')
        lines += [f"- {spelled(c.path)}" for c in conflicts if c.manager == manager]
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
