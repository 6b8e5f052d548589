"""GitHub workflows and actions: job containers, service containers, `docker://` steps, images actions pull.

    jobs.<id>.container: IMAGE            (or container.image)
    jobs.<id>.services.<name>.image
    jobs.<id>.steps[].uses: docker://IMAGE
    jobs.<id>.steps[].with.<input>        (the inputs of _ACTION_IMAGES)
    runs.image: docker://IMAGE            (a Docker container action's action.yml)
    runs.steps[]                          (a composite action's steps, read as a job's)

and every `uses:` (`Searched.actions`), each with the exact place of its value and of the version
comment after it, the places pinning an action to a commit rewrites:

    jobs.<id>.uses                        a reusable workflow
    jobs.<id>.steps[].uses                an action, local (`./…`) or an image (`docker://…`)
    runs.steps[].uses                     a composite action's (action.yml)

A container, service image or input written as one matrix expression (`${{ matrix.db }}`,
`${{ matrix.build.image }}`) stands for the values it takes from the job's `strategy.matrix`:
those values are the references, pinned where they are written. A matrix of more runs than
GitHub starts (256) leaves its expressions reported, saying so.

YAML aliases let a few lines stand for a huge tree, which GitHub expands: a workflow
whose aliases expand it beyond a bound proportional to its text is refused (`Unreadable`).
Within that bound, every step costs at most a fixed amount per node: runs are bits
(which runs hold each value), and what a matrix expression takes is worked out once.
"""
from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from yaml.error import Mark
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.errors import InvalidReference
from pinguard.sources import kinds
from pinguard.sources.base import (
    DEFAULT_SETTINGS,
    DOCKER,
    LOCAL,
    REMOTE,
    ActionUse,
    Found,
    Searched,
    SourceSettings,
    Unreadable,
)
from pinguard.sources.yamlnodes import (
    Located,
    each_document,
    embedded,
    expanded_size,
    found_at,
    mapping_get,
    mapping_pairs,
    same_position,
    scalar_text,
    value_span,
)
from pinguard.uses import is_docker, is_local, parse_uses, read_version

SOURCE = kinds.WORKFLOW
_DOCKER = "docker://"

# Action (without `@ref`, lower case) -> its inputs that name an image the action pulls and runs.
# Inputs naming an image the action builds, pushes or scans are no references to pin.
_ACTION_IMAGES: dict[str, tuple[str, ...]] = {
    "addnab/docker-run-action": ("image",),
    "container-tools/kind-action": ("node_image",),
    "docker/setup-buildx-action": ("driver-opts",),
    "docker/setup-qemu-action": ("image",),
    "engineerd/setup-kind": ("image",),
    "helm/kind-action": ("node_image", "registry_image"),
    "kohlerdominik/docker-run-action": ("image",),
}
_DRIVER_OPTS = "driver-opts"  # lines of comma-separated `key=value` entries; `image=` names the BuildKit image
_DRIVER_IMAGE = re.compile(r'(?:^|[,\n])[ \t]*"?image=(?P<value>[^,"\r\n]*)')

_MATRIX = re.compile(r"\$\{\{\s*matrix(?P<path>(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[\s*'(?:[^']|'')*'\s*\])+)\s*\}\}")
_MATRIX_STEP = re.compile(r"\.(?P<name>[A-Za-z_][A-Za-z0-9_-]*)|\[\s*'(?P<quoted>(?:[^']|'')*)'\s*\]")
_NOT_MATRIX_KEYS = ("include", "exclude")
_MAX_RUNS = 256  # GitHub runs at most 256 jobs of one matrix
_NODES_PER_CHARACTER = 2  # what reading a workflow may visit: linear in its text, however aliases multiply it
_MIN_NODES = 1 << 15


def find(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS) -> Searched:
    reading = _Reading(Located(text, path, SOURCE))
    found: list[Found] = []
    for document in each_document(text):
        settings.read(document, reading.where)
        reading.expand(document)
        jobs = mapping_get(document, "jobs")
        for _, job in jobs.value if isinstance(jobs, MappingNode) else ():
            reading.use(mapping_get(job, "uses"))
            found.extend(_job(job, reading))
        runs = mapping_get(document, "runs")
        if isinstance(runs, MappingNode):
            found.extend(_scalar(mapping_get(runs, "image"), reading.where, _DOCKER))
            found.extend(_steps(mapping_get(runs, "steps"), _Images(reading, None)))
    actions = sorted(reading.actions.values(), key=lambda use: use.span.start)
    return Searched(sorted(found, key=lambda f: f.span.start), tuple(actions))


class _Reading:
    """One workflow being read: where, what reading it may still visit, and the matrices worked out."""

    def __init__(self, where: Located) -> None:
        self.where = where
        self.nodes_left = _MIN_NODES + _NODES_PER_CHARACTER * len(where.text)
        self.matrices: dict[int, _Matrix] = {}
        self.drawn: dict[tuple[int, tuple[str, ...]], _Drawn] = {}
        self.actions: dict[tuple[int, int], ActionUse] = {}  # by the place written: an alias reaches it again

    def use(self, node: Node | None) -> None:
        """Record a `uses:` value, once however many aliases reach it."""
        if node is not None:
            written = (node.start_mark.index, node.end_mark.index)
            if written not in self.actions:
                self.actions[written] = action_use(node, self.where)

    def expand(self, document: Node) -> None:
        """Count a document's tree as its aliases expand it: a tree walk over it then costs no more."""
        if "*" in self.where.text:  # without an alias, the tree is the text's
            self.visit(document, expanded_size(document, self.nodes_left + 1))

    def visit(self, node: Node, count: int = 1) -> None:
        self.nodes_left -= count
        if self.nodes_left < 0:
            raise Unreadable(f"reading this workflow would visit more than {_NODES_PER_CHARACTER} YAML nodes a "
                             "character: its aliases or matrices repeat more than pinguard reads; write them out",
                             node.start_mark.line + 1, node.start_mark.column + 1)

    def matrix(self, node: MappingNode) -> _Matrix:
        if id(node) not in self.matrices:
            self.matrices[id(node)] = _Matrix(node, self)
        return self.matrices[id(node)]


@dataclass(frozen=True)
class _Images:
    """Reads image values in one job: a value itself, or the matrix values a matrix expression takes."""

    reading: _Reading
    job: Node | None  # None outside a job (a composite action's steps): no matrix to take values from

    @property
    def where(self) -> Located:
        return self.reading.where

    def at(self, node: Node | None, to_file: Callable[[int], int] = same_position) -> list[Found]:
        expression = _MATRIX.fullmatch(str(node.value)) if isinstance(node, ScalarNode) else None
        if expression is None or self.job is None:
            return _scalar(node, self.where, to_file=to_file)
        drawn = _draw(self.job, _matrix_path(expression.group("path")), self.reading)
        found = [item for value in drawn.values if (item := _value(value, self.where)) is not None]
        if drawn.gap is not None:  # some runs' values cannot be read here: the expression stays reported, saying why
            more = f" (and {drawn.gaps - 1} more)" if drawn.gaps > 1 else ""
            found.extend(replace(item, problem=f"{item.problem}: {drawn.gap}{more}")
                         for item in _scalar(node, self.where, to_file=to_file))
        return found


def _job(job: Node, reading: _Reading) -> list[Found]:
    images = _Images(reading, job)
    found: list[Found] = []
    container = mapping_get(job, "container")
    found.extend(images.at(mapping_get(container, "image") if isinstance(container, MappingNode) else container))
    services = mapping_get(job, "services")
    for _, service in services.value if isinstance(services, MappingNode) else ():
        found.extend(images.at(mapping_get(service, "image")))
    found.extend(_steps(mapping_get(job, "steps"), images))
    return found


def _steps(steps: Node | None, images: _Images) -> list[Found]:
    found: list[Found] = []
    for step in steps.value if isinstance(steps, SequenceNode) else ():
        uses = mapping_get(step, "uses")
        images.reading.use(uses)
        found.extend(_scalar(uses, images.where, _DOCKER))
        inputs = mapping_get(step, "with")
        if isinstance(inputs, MappingNode):
            found.extend(_inputs((scalar_text(uses) or "").partition("@")[0].lower(), inputs, images))
    return found


def _inputs(action: str, inputs: MappingNode, images: _Images) -> list[Found]:
    """The images a known action pulls, named by its inputs (`with:`)."""
    found: list[Found] = []
    for name in _ACTION_IMAGES.get(action, ()):
        value = mapping_get(inputs, name)
        found.extend(_driver_images(value, images) if name == _DRIVER_OPTS else images.at(value))
    return found


def _driver_images(node: Node | None, images: _Images) -> list[Found]:
    """The `image=` entries of setup-buildx-action's `driver-opts`, each read in place."""
    if not isinstance(node, ScalarNode) or _DRIVER_IMAGE.search(str(node.value)) is None:
        return []
    mapped = embedded(node, images.where)
    if mapped is None:
        start = node.start_mark.index
        return [Found(images.where.path, SOURCE, images.where.span(start, start + 1),
                      images.where.text[start:start + 1], None,
                      "driver-opts written folded or with escapes; write it as a literal block (|) "
                      "or a plain value to pin its image")]
    text, to_file = mapped
    found: list[Found] = []
    for match in _DRIVER_IMAGE.finditer(text):
        value = match.group("value").rstrip(" \t")
        if value:  # `image=` alone: buildx's default image
            start = match.start("value")
            entry = ScalarNode("tag:yaml.org,2002:str", value, _mark(start), _mark(start + len(value)))
            found.extend(images.at(entry, to_file))
    return found


_UNEDITABLE = ("written with escapes, as a block scalar or over lines; write it as a plain or quoted value on one "
               "line to pin it")
_BLANKS = re.compile(r"[ \t]*")
_REST_OF_LINE = re.compile(r"[^\r\n]*")


def action_use(node: Node, where: Located) -> ActionUse:
    """What a `uses:` value names, where it is written, and the comment after it.

    Only a plain or quoted value on one line, its text its value, can be pinned in place; any
    other is found at its first character, `problem` saying why. So is a value that names no
    action, and an expression: GitHub reads `uses` before it evaluates any.
    """
    start = node.start_mark.index
    if not isinstance(node, ScalarNode):
        return _unusable(node, where, REMOTE, "`uses` is no string: it names no action")
    value = scalar_text(node)
    if value is None or not value.strip():  # `uses:`, `uses: ~`
        span = where.span(start, node.end_mark.index)
        return ActionUse(where.path, span, where.text[span.start:span.end], REMOTE, None, "`uses` names no action")
    kind = LOCAL if is_local(value) else DOCKER if is_docker(value) else REMOTE
    value_start, value_end = value_span(node)
    if node.style not in (None, "", "'", '"') or where.text[value_start:value_end] != value:
        return _unusable(node, where, kind, _UNEDITABLE)
    action, problem = None, None
    if "${{" in value:
        problem = f"{value!r} is an expression: GitHub reads `uses` as written, before it evaluates any"
    elif kind == REMOTE:
        try:
            action = parse_uses(value)
        except InvalidReference as exc:
            problem = str(exc)
    comment, comment_at = _trailing(where.text, node.end_mark.index)
    comment_text = None if comment is None else where.text[comment[0]:comment[1]]
    note = None if comment_text is None else read_version(comment_text)
    return ActionUse(where.path, where.span(value_start, value_end), value, kind, action, problem,
                     comment=None if comment is None else where.span(*comment),
                     version=None if note is None else note.ref, comment_text=comment_text, comment_at=comment_at)


def _unusable(node: Node, where: Located, kind: str, problem: str) -> ActionUse:
    span = where.span(node.start_mark.index, node.start_mark.index + 1)
    return ActionUse(where.path, span, where.text[span.start:span.end], kind, None, problem)


def _trailing(text: str, at: int) -> tuple[tuple[int, int] | None, int | None]:
    """After a value ending at `at` (its closing quote included): the comment on its line, [`#`, line end), and
    where a comment can be written: `at`, unless the line goes on after the value with more than a comment."""
    blanks = _BLANKS.match(text, at)
    after = blanks.end() if blanks else at  # the pattern matches anywhere
    if after > at and text.startswith("#", after):  # YAML's comment: a `#` after a blank
        rest = _REST_OF_LINE.match(text, after)
        return (after, rest.end() if rest else after), at
    return None, at if after == len(text) or text[after] in "\r\n" else None


def _mark(index: int) -> Mark:
    return Mark("", index, 0, 0, None, 0)


def _scalar(node: Node | None, where: Located, prefix: str = "",
            to_file: Callable[[int], int] = same_position) -> list[Found]:
    item = found_at(node, where, prefix=prefix, to_file=to_file) if isinstance(node, ScalarNode) else None
    return [item] if item is not None else []


def _value(node: ScalarNode, where: Located) -> Found | None:
    """A matrix value as a reference; an empty one is none (an empty container runs the job on the host)."""
    return found_at(node, where) if str(node.value).strip() else None


def _matrix_path(written: str) -> list[str]:
    """`.build.image` or `['build']['image']` as ["build", "image"]."""
    return [step["name"] if step["name"] is not None else step["quoted"].replace("''", "'")
            for step in _MATRIX_STEP.finditer(written)]


class _Matrix:
    """A job's `strategy.matrix` as written: lists under its own keys, `include` and `exclude` entries.

    A run is a bit: `having` says, for each own key and value, which runs have it, so matching
    an entry against every run costs a step per key of the entry. Entries met again through
    an alias are read once.
    """

    def __init__(self, node: MappingNode, reading: _Reading) -> None:
        self.node = node
        self.reading = reading
        self.names = list(dict.fromkeys(name for name in _keys(node) if name not in _NOT_MATRIX_KEYS))
        self.named = frozenset(self.names)
        self.include = self._distinct("include")
        self.exclude = self._distinct("exclude")
        self.having: dict[tuple[str, object], int] = {}
        self.runs: int | None = None  # the runs the own keys make, less the excluded ones; None: not known
        self.unknown: str | None = None  # why the runs are not known, when GitHub says
        self._keyed: dict[str, dict[str, list[tuple[int, Node]]]] = {}
        self._adding: list[int] | None = None
        self._adds: dict[int, bool] = {}
        self._every: dict[str, bool] = {}
        self._read_runs()

    def own(self, key: str) -> Node | None:
        return None if key in _NOT_MATRIX_KEYS else mapping_get(self.node, key)

    def _distinct(self, kind: str) -> list[Node]:
        """The `include` or `exclude` entries, each node once."""
        entries = _items(mapping_get(self.node, kind))
        self.reading.visit(self.node, len(entries))
        return list({id(entry): entry for entry in entries}.values())

    def _read_runs(self) -> None:
        lists = [self.own(name) for name in self.names]
        if not all(isinstance(values, SequenceNode) for values in lists):
            return
        count = math.prod(len(_items(values)) for values in lists) if self.names else 0
        if count > _MAX_RUNS:
            self.unknown = _too_many(count)
            return
        self.reading.visit(self.node, count * len(self.names))
        for run, values in enumerate(itertools.product(*(_items(values) for values in lists))):
            for name, value in zip(self.names, values, strict=True):
                slot = (name, _identity(value))
                self.having[slot] = self.having.get(slot, 0) | 1 << run
        every = (1 << count) - 1
        excluded = 0
        for entry in self.exclude:  # an exclude entry names only own keys, each with the run's value
            if isinstance(entry, MappingNode) and self.named.issuperset(_keys(entry)):
                excluded |= self._matching(entry, every)
        self.runs = every & ~excluded
        included = _items(mapping_get(self.node, "include"))
        total = self.runs.bit_count() + sum(self.adds_a_run(entry) for entry in included)
        if total > _MAX_RUNS:
            self.unknown = _too_many(total)
            self.runs = None
            self._adds.clear()  # what was worked out against runs GitHub never starts

    def _matching(self, entry: Node, runs: int) -> int:
        """Which of `runs` an entry agrees with on every own key it names."""
        if not isinstance(entry, MappingNode):
            return 0
        self.reading.visit(entry, len(entry.value))
        for key, value in entry.value:
            name = scalar_text(key)
            if name is not None and name in self.named:
                runs &= self.having.get((name, _identity(value)), 0)
        return runs

    def adds_a_run(self, entry: Node) -> bool:
        """Whether an include entry matches none of the own keys' runs, and so is a run of its own."""
        if id(entry) not in self._adds:
            self._adds[id(entry)] = self.runs is None or self._matching(entry, self.runs) == 0
        return self._adds[id(entry)]

    def every_run_gets(self, key: str) -> bool:
        """Whether every run of the own keys matches an include entry holding `key`."""
        if self.runs is None:
            return False
        if key not in self._every:
            covered = 0
            for number, _ in self.keyed("include").get(key, []):
                covered |= self._matching(self.include[number], self.runs)
            self._every[key] = covered & self.runs == self.runs
        return self._every[key]

    def keyed(self, kind: str) -> dict[str, list[tuple[int, Node]]]:
        """Key -> (number, value) of every `include` or `exclude` entry holding the key, in the entries' order:
        what a matrix expression takes costs a step per entry that holds its key, not one per entry."""
        if kind not in self._keyed:
            keyed: dict[str, list[tuple[int, Node]]] = {}
            for number, entry in enumerate(self.include if kind == "include" else self.exclude):
                pairs = mapping_pairs(entry)
                self.reading.visit(entry, len(pairs))
                for key, value in pairs:
                    keyed.setdefault(str(key.value), []).append((number, value))
            self._keyed[kind] = keyed
        return self._keyed[kind]

    def adding(self) -> list[int]:
        """The numbers of the include entries that are runs of their own."""
        if self._adding is None:
            self._adding = [number for number, entry in enumerate(self.include) if self.adds_a_run(entry)]
        return self._adding

    def excluded(self, path: list[str], written: set[str]) -> list[ScalarNode]:
        """The `exclude` values at `path` that equal a value in `written`: an exclude matches runs by value."""
        found: list[ScalarNode] = []
        for _, holding in self.keyed("exclude").get(path[0], []):
            value = _follow(holding, path[1:], self.reading)
            if isinstance(value, ScalarNode) and str(value.value) in written:
                found.append(value)
        return found


class _Drawn:
    """The scalars a matrix expression takes across a job's runs, and why some runs' values cannot be read."""

    def __init__(self, gap: str | None = None) -> None:
        self.values: list[ScalarNode] = []
        self.gap = gap  # the first reason
        self.gaps = 0 if gap is None else 1

    def lack(self, reason: str, count: int = 1) -> None:
        self.gap = self.gap or reason
        self.gaps += count

    def take(self, node: Node, path: list[str], reading: _Reading) -> None:
        """The value at `path` below `node`, an entry of the matrix."""
        value = _follow(node, path, reading)
        if isinstance(value, ScalarNode):
            self.values.append(value)
        elif value is None:
            self.lack(f"the matrix entry at line {_line(node)} has no `{'.'.join(path)}`")
        else:
            self.lack(f"the matrix value at line {_line(value)} is not a single value")

    def take_own(self, matrix: _Matrix, path: list[str]) -> None:
        """The values in the list under the own key, and the `exclude` values naming one of them."""
        key, rest = path[0], path[1:]
        own = matrix.own(key)
        if matrix.unknown is not None:
            self.lack(matrix.unknown)
        if isinstance(own, SequenceNode):
            for item in own.value:
                self.take(item, rest, matrix.reading)
            self.values.extend(matrix.excluded(path, {str(value.value) for value in self.values}))
        elif own is not None:
            self.lack(f"matrix `{key}` is not a list written out in the workflow")
        elif not matrix.every_run_gets(key):
            self.lack(f"some runs of the matrix's own keys get no `{key}` from an include entry")

    def take_included(self, matrix: _Matrix, path: list[str]) -> None:
        """The values of `include` entries; an entry without one that is a run of its own is a gap."""
        key, rest = path[0], path[1:]
        if not isinstance(mapping_get(matrix.node, "include"), SequenceNode | None):
            self.lack("matrix `include` is not a list written out in the workflow")
        holding = matrix.keyed("include").get(key, [])
        for _, value in holding:
            self.take(value, rest, matrix.reading)
        held = {number for number, _ in holding}
        adding = matrix.adding()
        missing = len(adding) - sum(1 for number in held if matrix.adds_a_run(matrix.include[number]))
        if missing:  # the first is found past at most the entries that hold the key
            first = next(number for number in adding if number not in held)
            self.lack(f"the include entry at line {_line(matrix.include[first])} has no `{key}`", missing)


def _draw(job: Node, path: list[str], reading: _Reading) -> _Drawn:
    """What `matrix.<path>` takes in a job's runs, worked out once per matrix and path.

    The values are those of the own list, of `include` entries, and of the `exclude`
    entries that name an own value: those are pinned with it, or they would stop matching.
    """
    strategy = mapping_get(job, "strategy")
    node = mapping_get(strategy, "matrix") if strategy is not None else None
    if not isinstance(node, MappingNode):
        return _Drawn("the job's strategy.matrix is not written out in the workflow")
    key = (id(node), tuple(path))
    if key not in reading.drawn:
        reading.drawn[key] = _drawn(reading.matrix(node), path)
    return reading.drawn[key]


def _drawn(matrix: _Matrix, path: list[str]) -> _Drawn:
    if matrix.own(path[0]) is None and path[0] not in matrix.keyed("include"):
        return _Drawn(f"no `{path[0]}` in the job's strategy.matrix")
    drawn = _Drawn()
    drawn.take_own(matrix, path)
    drawn.take_included(matrix, path)
    return drawn


def _too_many(runs: int) -> str:
    return f"the matrix makes {runs} runs, more than the {_MAX_RUNS} GitHub starts"


def _items(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def _follow(node: Node, path: list[str], reading: _Reading) -> Node | None:
    reading.visit(node, 1 + len(path))
    value: Node | None = node
    for key in path:
        value = mapping_get(value, key) if value is not None else None
    return value


def _identity(value: Node) -> object:
    """What a value is to matching: its text, or the node itself (a mapping, a null) when it has none."""
    text = scalar_text(value)
    return ("", text) if text is not None else ("node", id(value))


def _keys(node: Node) -> list[str]:
    pairs = node.value if isinstance(node, MappingNode) else []
    return [key for key_node, _ in pairs if (key := scalar_text(key_node)) is not None]


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1
