"""stale-admission: the admission policies exported from the lock admit exactly the digests it holds.

`pinguard export admission` writes the lock into the cluster's admission policy: the
params ConfigMaps of `--format vap`, or the deny condition of `--format kyverno`. A
repository that keeps that output and changes its lock without exporting again deploys
a policy that refuses the images the lock now holds, still admits the ones it dropped,
and tells a refused pod to pin the digest its tag had before.

Checked: every ConfigMap and Kyverno ClusterPolicy labelled
`app.kubernetes.io/managed-by: pinguard`, as kubectl reads it: keys merged in with a YAML
merge key (`<<`) count, of a key written twice the last counts (`duplicate-key` reports the
other), and the items of a list are read too. In a ConfigMap (`params` says how an
export writes one):

- a digest key the lock does not hold (an index or platform digest of an entry) is a
  finding at that key; the lock's digests of its range (`digests.from` to `digests.to`;
  every digest when it names no range) that it lacks are one finding, at `data`;
- every other key but its settings names an entry (`params.key`): one that names no
  entry of the lock, or whose value is not the entry's index digest (the digest a denial
  tells to pin), is a finding; the entries of its name class (`names.class` of
  `names.classes`) it does not name are one finding, at `data`;
- settings that are no cell of the layout the lock is exported with are a finding: the
  policy would let a container pass unjudged; so is a cell of digests only
  (`names.omitted`) where the export names entries, or the other way round;
- a `pinguard.dev/layout` label other than that layout is one too: the params were split
  for another lock size, and the export's `kubectl delete` removes what is left of them.

A ValidatingAdmissionPolicyBinding whose params (`paramRef`) are a cell no export of the
lock writes is a finding: applied with the export and pruned as its header says, it is
left bound to params that are gone, and an API server denies every pod it matches.

The keepalive every export carries (`keepalive`: a ConfigMap, a policy and a binding,
`app.kubernetes.io/component: admission-keepalive`) holds no digest: it is a finding only
where it is not what `keepalive.objects` writes.

In a Kyverno policy, each `value` list of a deny condition is read as the digest keys of
a ConfigMap of every digest (a problem its rules share is told once). The lockfile's
sha256 in the annotations may differ: only the digests and names count. The lock is read
once a run, so an object costs what it holds, whatever the lock's size: a finding about
what is missing counts it all and names the first few.

PASS: `pinguard export admission --output deploy/admission.yaml` run after the last `pinguard lock`
FAIL: `pinguard update` moved a tag; deploy/admission.yaml still admits the old digest
"""
from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.admission import keepalive
from pinguard.admission.objects import COMPONENT, KEEPALIVE_COMPONENT, LAYOUT_LABEL, MANAGED_BY, NAME, Source
from pinguard.admission.params import (
    CLASS,
    CLASSES,
    FROM,
    MAX_CELLS,
    OMITTED,
    TO,
    Layout,
    entry_name,
    key,
    layout_of,
    name_class,
)
from pinguard.errors import PinguardError
from pinguard.findings import Problem
from pinguard.lock.lockfile import LockEntry
from pinguard.policy.rules.common import Conf, Context, get, items
from pinguard.sources.yamlnodes import Located, mapping_pairs, scalar_text

ID = "stale-admission"
TYPE: Final = "document-lock"
MARK = MANAGED_BY[1]  # the label value every object it checks carries
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}

_HEX = re.compile(r"[0-9a-f]{64}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_RANGE_END = re.compile(r"[0-9a-f]{2}")  # the first two hex digits of a digest
# The name of a params ConfigMap (`vap._name`): the cell's place, if any, then the namespaces bound (or their hash).
_CELL_NAME = re.compile(rf"{re.escape(NAME)}(?:-(?P<range>[0-9]{{1,3}})-(?P<class>[0-9]{{1,3}})-of-"
                        rf"(?P<ranges>[0-9]{{1,3}})x(?P<classes>[0-9]{{1,3}}))?(?:\.|$)")
_COUNT = re.compile(r"[0-9]{1,3}")
_SETTINGS = (FROM, TO, CLASS, CLASSES, OMITTED)  # in the order of a cell's place
_JUDGING = 4  # the first settings: what a cell judges
_LISTED = 10  # what is missing, named in a finding; its count says the rest
_AGAIN = "export it again with `pinguard export admission`"
_Admitted = list[tuple[str, ScalarNode]]  # (digest, where it is written)
_Told = tuple[Node, str, str | None]  # where, what is wrong, the digest it is about
_Place = tuple[str | None, ...]  # a ConfigMap's settings in the order of _SETTINGS; None: not one value


@dataclass
class _Exported:
    """What an export of the lock holds, read once a run."""

    context: Context
    digests: dict[str, LockEntry]  # every index and platform digest, sorted, to its entry
    _classes: dict[int, list[list[str]]] = field(default_factory=dict)

    @cached_property
    def sorted_digests(self) -> list[str]:
        return list(self.digests)

    @cached_property
    def names(self) -> dict[str, tuple[str, LockEntry]]:
        """The params key of each entry, sorted, to its `name:tag` as the params write it and the entry; an entry
        that is no image name and tag has none (`layout` says why)."""
        found: dict[str, tuple[str, LockEntry]] = {}
        for entry in self.context.lock:
            try:
                name = entry_name(entry, self.context.lockfile)
            except PinguardError:
                continue
            found[key(name)] = (name, entry)
        return dict(sorted(found.items()))

    @cached_property
    def layout(self) -> tuple[Layout, frozenset[_Place]] | PinguardError:
        """The layout an export of the lock has and the place of each of its cells, or why there is no export."""
        try:  # the sha256 in the annotations is always 64 characters: its value does not move the layout
            found = layout_of(Source(self.context.lock, self.context.lockfile, "0" * 64))
        except PinguardError as exc:
            return exc
        return found, frozenset(tuple(found.settings(index, name_class_).get(s) for s in _SETTINGS)
                                for index in range(found.ranges) for name_class_ in range(found.classes))

    @property
    def names_entries(self) -> bool:
        """Whether an export of the lock names its entries (a lock that cannot be exported: as if it did)."""
        return isinstance(self.layout, PinguardError) or self.layout[0].names

    def in_class(self, name_class_: int, classes: int) -> list[str]:
        """The sorted params keys of the entries of class `name_class_` of `classes` (at most MAX_CELLS)."""
        if classes not in self._classes:
            grouped: list[list[str]] = [[] for _ in range(classes)]
            for entry_key, (name, _) in self.names.items():
                grouped[name_class(name, classes)].append(entry_key)
            self._classes[classes] = grouped
        return self._classes[classes][name_class_]


def _exported(context: Context) -> _Exported:
    """The lock of `context` as an export writes it: read for the first document of a run, kept for the others."""
    exported = context.derived.get(ID)
    if not isinstance(exported, _Exported):
        digests = {digest: entry for entry in context.lock for digest in (entry.digest, *entry.platforms.values())}
        exported = context.derived[ID] = _Exported(context, dict(sorted(digests.items())))
    return exported


def check(conf: Conf, document: Node, where: Located, context: Context) -> Iterator[Problem]:
    for managed in _objects(document):
        labels = get(managed, "metadata", "labels")
        if scalar_text(get(labels, MANAGED_BY[0])) != MANAGED_BY[1]:
            continue
        if scalar_text(get(labels, COMPONENT)) == KEEPALIVE_COMPONENT:
            yield from _keepalive(managed, where)
        else:
            yield from _stale(managed, where, context)


def _keepalive(document: Node, where: Located) -> Iterator[Problem]:
    """A keepalive object that is not the one of its kind `keepalive.objects` writes."""
    kind = scalar_text(get(document, "kind"))
    written = [obj for obj in keepalive.objects() if obj["kind"] == kind]
    if not written or not _same(document, written[0]):
        yield _at(document, where, f"{kind} {keepalive.NAME} is not the keepalive pinguard writes (it keeps the API "
                                   f"server reading params): {_AGAIN}")


def _same(node: Node | None, value: object) -> bool:
    """Whether `node` reads as `value` (mappings, lists and strings), walked as far as `value` goes."""
    if isinstance(value, dict):
        pairs = {str(k.value): v for k, v in mapping_pairs(node)}
        return isinstance(node, MappingNode) and pairs.keys() == value.keys() and all(
            _same(pairs[k], v) for k, v in value.items())
    if isinstance(value, list):
        return isinstance(node, SequenceNode) and len(node.value) == len(value) and all(
            _same(n, v) for n, v in zip(node.value, value, strict=True))
    return scalar_text(node) == value


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
    exported = _exported(context)
    if kind == "ConfigMap":
        problems = _configmap(document, exported)
    elif kind == "ValidatingAdmissionPolicyBinding":
        problems = _binding(document, exported)
    elif kind == "ClusterPolicy" and (scalar_text(get(document, "apiVersion")) or "").startswith("kyverno.io/"):
        problems = _kyverno(document, exported)
    else:
        return
    said: set[str] = set()  # the rules of a Kyverno policy repeat one list: a stale digest is told once
    for node, message, reference in problems:
        if message not in said:
            said.add(message)
            yield _at(node, where, message, reference)


def _binding(document: Node, exported: _Exported) -> Iterator[_Told]:
    """A binding whose params an export of the lock does not write: applied with that export, then pruned as its
    header says, it is left without them, and denies every pod it matches."""
    ref = get(document, "spec", "paramRef", "name")
    named = _CELL_NAME.match(scalar_text(ref) or "")
    if ref is None or named is None or isinstance(exported.layout, PinguardError):
        return
    layout, _ = exported.layout
    ranges, classes = (int(named["ranges"]), int(named["classes"])) if named["ranges"] else (1, 1)
    within = named["range"] is None or (int(named["range"]) < ranges and int(named["class"]) < classes)
    if (ranges, classes) != (layout.ranges, layout.classes) or not within:
        yield ref, (f"ValidatingAdmissionPolicyBinding reads params {scalar_text(ref)}, which an export of "
                    f"{exported.context.lockfile} does not write (its params are split {layout}): applied with it "
                    f"and pruned, this binding is left without params and denies every pod it matches: {_AGAIN}"), None


def _kyverno(document: Node, exported: _Exported) -> Iterator[_Told]:
    """Each `value` list of a deny condition, against every digest of the lock."""
    lists = (values for spec in _every(document, "spec")
             for rule in items(get(spec, "rules"))
             for foreach in items(get(rule, "validate", "foreach"))
             for condition in items(get(foreach, "deny", "conditions", "any"))
             for values in _every(condition, "value") if isinstance(values, SequenceNode))
    for values in lists:
        admitted = [(str(v.value), v) for v in values.value
                    if isinstance(v, ScalarNode) and _DIGEST.fullmatch(str(v.value))]
        yield from _digests("ClusterPolicy", admitted, values, exported, ("00", "ff"))


def _configmap(document: Node, exported: _Exported) -> Iterator[_Told]:
    pairs = [pair for data in _every(document, "data") for pair in mapping_pairs(data)]
    anchor = _key(document, "data") or document
    place, nodes = _place(pairs)
    labelled = _every(get(document, "metadata", "labels"), LAYOUT_LABEL)
    if nodes or labelled:  # made by an export, not by hand: its layout and place count
        yield from _layout(place, anchor, labelled, exported)
    digests = [(f"sha256:{k.value}", k) for k, _ in pairs if _HEX.fullmatch(str(k.value))]
    digest_range = _digest_range(*place[:2]) if nodes else ("00", "ff")  # written by hand: every digest
    if digest_range is not None:
        yield from _digests("ConfigMap", digests, anchor, exported, digest_range)
    named = [(k, v) for k, v in pairs if k.value not in _SETTINGS and not _HEX.fullmatch(str(k.value))]
    yield from _stale_names(named, exported)
    of_class = _name_class(*place[2:_JUDGING])
    # A cell of digests only names no entry; one that says so wrongly is a finding of `_layout`.
    if of_class is not None and exported.names_entries and not any(k.value == OMITTED for k, _ in pairs):
        yield from _unnamed({str(k.value) for k, _ in named}, exported.in_class(*of_class), anchor, exported)


def _digest_range(first: str | None, last: str | None) -> tuple[str, str] | None:
    """The first two hex digits of the first and last digests of a range; None when it is none (a finding of
    `_layout`)."""
    if first is None or last is None or not (_RANGE_END.fullmatch(first) and _RANGE_END.fullmatch(last)):
        return None
    return (first, last) if first <= last else None


def _name_class(name_class_: str | None, classes: str | None) -> tuple[int, int] | None:
    """A name class and the number of classes; None when it is none (a finding of `_layout`)."""
    if name_class_ is None or classes is None or not (_COUNT.fullmatch(name_class_) and _COUNT.fullmatch(classes)):
        return None
    return (int(name_class_), int(classes)) if int(name_class_) < int(classes) <= MAX_CELLS else None


def _place(pairs: Sequence[tuple[ScalarNode, Node]]) -> tuple[_Place, list[Node]]:
    """The settings a ConfigMap writes, each as one value (None where it is not written, or with no string), and the
    nodes that write any."""
    written: dict[str, list[Node]] = {}
    for k, v in pairs:
        if k.value in _SETTINGS:
            written.setdefault(k.value, []).append(v)
    place = []
    for setting in _SETTINGS:
        texts = {scalar_text(node) for node in written.get(setting, [])}
        place.append(texts.pop() if len(texts) == 1 else None)
    return tuple(place), [node for nodes in written.values() for node in nodes]


def _layout(place: _Place, anchor: Node, labelled: list[Node], exported: _Exported) -> Iterator[_Told]:
    """Whether the ConfigMap is a cell of the layout the lock is exported with: in its label and in its settings."""
    lockfile = exported.context.lockfile
    layout = exported.layout
    if isinstance(layout, PinguardError):
        yield (labelled or [anchor])[0], f"ConfigMap was exported from another lock: {layout}", None
        return
    wrong = [node for node in labelled if scalar_text(node) != str(layout[0])]
    if wrong:
        yield wrong[0], (f"ConfigMap params were split for another lock size ({LAYOUT_LABEL} "
                         f"{scalar_text(wrong[0])!r}; {lockfile} is exported as {layout[0]}): {_AGAIN}, apply it "
                         "and run the `kubectl delete` command of its header"), None
    elif place[:_JUDGING] not in {cell[:_JUDGING] for cell in layout[1]}:
        written = ", ".join(f"`{s}` {value!r}" if value is not None else f"no one `{s}`"
                            for s, value in zip(_SETTINGS[:_JUDGING], place[:_JUDGING], strict=True))
        yield anchor, (f"ConfigMap judges a digest range and name class ({written}) that is no cell of the "
                       f"{layout[0]} layout {lockfile} is exported as: a container may pass unjudged; {_AGAIN}"), None
    elif place not in layout[1]:
        said = (f"says it names no entry (`{OMITTED}`), but {lockfile} is exported as {layout[0]}, naming each entry "
                "in the cell of its class: a denial would not say what to pin") if layout[0].names else (
            f"lacks `{OMITTED}: 'true'`, but {lockfile} is exported as {layout[0]} of digests only (too large to name "
            "its entries in every cell): a denial would say the lock has no entry for an image it may hold")
        yield anchor, f"ConfigMap {said}; {_AGAIN}", None


def _digests(kind: str, admitted: _Admitted, anchor: Node, exported: _Exported,
             digest_range: tuple[str, str]) -> Iterator[_Told]:
    """A digest admitted that the lock does not hold, and those of the range the lock holds and `admitted` lacks."""
    lockfile = exported.context.lockfile
    for digest, node in admitted:
        if digest not in exported.digests:
            yield node, f"{kind} admits `{digest}`, which {lockfile} does not hold: {_AGAIN}", digest
    locked = exported.sorted_digests
    first, last = digest_range
    span = bisect.bisect_left(locked, f"sha256:{first}"), bisect.bisect_left(locked, f"sha256:{last}g")
    count, missing = _absent(locked, span, {digest for digest, _ in admitted})
    if count:
        named = ", ".join(f"`{d}` ({exported.digests[d].name}:{exported.digests[d].tag})" for d in missing)
        yield anchor, (f"{kind} does not admit {count} digest{'s' * (count > 1)} that {lockfile} holds: "
                       f"{named}{_more(count)}; {_AGAIN}"), None


def _stale_names(named: Sequence[tuple[ScalarNode, Node]], exported: _Exported) -> Iterator[_Told]:
    """A name key that names no entry, or whose value is not its entry's index digest."""
    lockfile = exported.context.lockfile
    for entry_key, value in named:
        found = exported.names.get(str(entry_key.value))
        if found is None:
            yield entry_key, f"ConfigMap names `{entry_key.value}`, which {lockfile} has no entry for: {_AGAIN}", None
            continue
        entry = found[1]
        written = scalar_text(value)
        if written != entry.digest.removeprefix("sha256:"):
            shown = "no digest" if written is None else f"`sha256:{written}`" if _HEX.fullmatch(written) else (
                f"`{written}`")
            yield value, (f"ConfigMap tells to pin {entry.name}:{entry.tag} to {shown}, not to `{entry.digest}` as "
                          f"{lockfile} does: {_AGAIN}"), None


def _unnamed(present: set[str], wanted: list[str], anchor: Node, exported: _Exported) -> Iterator[_Told]:
    """The entries of the ConfigMap's name class that it does not name."""
    count, missing = _absent(wanted, (0, len(wanted)), present)
    if count:
        named = ", ".join(f"{exported.names[k][1].name}:{exported.names[k][1].tag}" for k in missing)
        yield anchor, (f"ConfigMap does not name {count} entr{'ies' if count > 1 else 'y'} that "
                       f"{exported.context.lockfile} holds: {named}{_more(count)}; {_AGAIN}"), None


def _absent(wanted: list[str], span: tuple[int, int], present: set[str]) -> tuple[int, list[str]]:
    """How many of `wanted[span]` (sorted, each once) `present` lacks, and the first `_LISTED` of them: at the cost of
    what is present, not of all that is wanted (each one passed over before them is present)."""
    start, end = span
    held = 0
    for item in present:
        at = bisect.bisect_left(wanted, item, start, end)
        held += at < end and wanted[at] == item
    missing = itertools.islice((wanted[at] for at in range(start, end) if wanted[at] not in present), _LISTED)
    return end - start - held, list(missing)


def _more(count: int) -> str:
    return f" and {count - _LISTED} more" if count > _LISTED else ""


def _every(mapping: Node | None, name: str) -> list[Node]:
    """The value of `name` Go's YAML sees, its own or merged in with `<<`; none when absent."""
    return [value for key_, value in mapping_pairs(mapping) if key_.value == name]


def _key(mapping: Node, name: str) -> ScalarNode | None:
    """The key node `name` of a mapping: where a finding about its value is shown."""
    return next((key_ for key_, _ in mapping_pairs(mapping) if key_.value == name), None)


def _at(node: Node, where: Located, message: str, reference: str | None = None) -> Problem:
    span = where.span(node.start_mark.index, node.end_mark.index)
    return Problem(where.path, span.line, span.column, message, reference)
