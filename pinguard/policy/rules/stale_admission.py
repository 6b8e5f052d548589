"""stale-admission: the admission policies exported from the lock admit exactly the digests it holds.

`pinguard export admission` writes the locked digests into the cluster's admission
policy: the params ConfigMap of `--format vap`, or the deny conditions of each rule of
`--format kyverno`. A repository that keeps that output and changes its lock without
exporting again deploys a policy that refuses the images the lock now holds, and still
admits the ones it dropped.

Checked: every ConfigMap and Kyverno ClusterPolicy labelled
`app.kubernetes.io/managed-by: pinguard`, as kubectl and PyYAML read it: keys merged in
with a YAML merge key (`<<`) count, a key written twice is read both times (loaders differ
on which wins), and the items of a list are read too. A digest it admits that the lock does not
hold (an index or platform digest of an entry) is a finding at that digest; the
digests the lock holds that it does not admit are one finding, at `data` (at the
`value` list of a Kyverno rule; a problem its rules share is told once). The
lockfile's sha256 in the annotations may differ: only the digests count.

PASS: `pinguard export admission --output deploy/admission.yaml` run after the last `pinguard lock`
FAIL: `pinguard update` moved a tag; deploy/admission.yaml still admits the old digest
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from yaml.nodes import Node, ScalarNode, SequenceNode

from pinguard.admission import MANAGED_BY
from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, get, items
from pinguard.sources.yamlnodes import Located, mapping_pairs, scalar_text

ID = "stale-admission"
TYPE = "document-lock"
MARK = MANAGED_BY[1]  # the label value every object it checks carries
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}

_HEX = re.compile(r"[0-9a-f]{64}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_Admitted = list[tuple[str, ScalarNode]]  # (digest, where it is written)


def check(conf: Conf, document: Node, where: Located, context: Context) -> Iterator[Problem]:
    for managed in _objects(document):
        if scalar_text(get(managed, "metadata", "labels", MANAGED_BY[0])) == MANAGED_BY[1]:
            yield from _stale(managed, where, context)


def _objects(document: Node) -> Iterator[Node]:
    """The objects a document holds as kubectl may apply them: itself, and the items of a list (`items:`)."""
    seen: set[int] = set()
    pending = [document]
    while pending:
        node = pending.pop()
        if id(node) not in seen:
            seen.add(id(node))
            yield node
            pending.extend(reversed(items(get(node, "items"))))


def _stale(document: Node, where: Located, context: Context) -> Iterator[Problem]:
    kind = scalar_text(get(document, "kind"))
    locked = {digest: entry for entry in context.lock for digest in (entry.digest, *entry.platforms.values())}
    again = "export it again with `pinguard export admission`"
    said: set[str] = set()  # the rules of a Kyverno policy repeat one list: a stale digest is told once
    for anchor, admitted in _holders(document, kind):
        problems: list[tuple[Node, str, str | None]] = [
            (node, f"{kind} admits `{digest}`, which {context.lockfile} does not hold: {again}", digest)
            for digest, node in admitted if digest not in locked]
        missing = sorted(set(locked) - {digest for digest, _ in admitted})
        if missing:
            named = ", ".join(f"`{d}` ({locked[d].name}:{locked[d].tag})" for d in missing)
            problems.append((anchor, f"{kind} does not admit {len(missing)} digest{'s' * (len(missing) > 1)} that "
                                     f"{context.lockfile} holds: {named}; {again}", None))
        for node, message, reference in problems:
            if message not in said:
                said.add(message)
                yield _at(node, where, message, reference)


def _holders(document: Node, kind: str | None) -> list[tuple[Node, _Admitted]]:
    """Each list of admitted digests the object holds, with the node a missing digest is reported at."""
    if kind == "ConfigMap":
        keys = [key for data in _every(document, "data") for key, _ in mapping_pairs(data)]
        anchor = _key(document, "data") or document
        return [(anchor, [(f"sha256:{key.value}", key) for key in keys if _HEX.fullmatch(str(key.value))])]
    if kind == "ClusterPolicy" and (scalar_text(get(document, "apiVersion")) or "").startswith("kyverno.io/"):
        return [(values, [(str(v.value), v) for v in values.value
                          if isinstance(v, ScalarNode) and _DIGEST.fullmatch(str(v.value))])
                for spec in _every(document, "spec")
                for rule in items(get(spec, "rules"))
                for foreach in items(get(rule, "validate", "foreach"))
                for condition in items(get(foreach, "deny", "conditions", "any"))
                for values in _every(condition, "value") if isinstance(values, SequenceNode)]
    return []


def _every(mapping: Node, name: str) -> list[Node]:
    """Every value of `name` a YAML loader may see: merged in with `<<`, or written twice (loaders differ
    on which wins, so each is read)."""
    return [value for key, value in mapping_pairs(mapping) if key.value == name]


def _key(mapping: Node, name: str) -> ScalarNode | None:
    """The key node `name` of a mapping: where a finding about its value is shown."""
    return next((key for key, _ in mapping_pairs(mapping) if key.value == name), None)


def _at(node: Node, where: Located, message: str, reference: str | None = None) -> Problem:
    span = where.span(node.start_mark.index, node.end_mark.index)
    return Problem(where.path, span.line, span.column, message, reference)
