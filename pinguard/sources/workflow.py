"""GitHub workflows and actions: job containers, service containers, `docker://` steps, images actions pull.

    jobs.<id>.container: IMAGE            (or container.image)
    jobs.<id>.services.<name>.image
    jobs.<id>.steps[].uses: docker://IMAGE
    jobs.<id>.steps[].with.<input>        (the inputs of _ACTION_IMAGES)
    runs.image: docker://IMAGE            (a Docker container action's action.yml)
    runs.steps[]                          (a composite action's steps, read as a job's)

A container, service image or input written as one matrix expression (`${{ matrix.db }}`,
`${{ matrix.build.image }}`) stands for the values it takes from the job's `strategy.matrix`:
those values are the references, pinned where they are written.
"""
from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from yaml.error import Mark
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.sources.base import Found, Searched
from pinguard.sources.yamlnodes import (
    Located,
    compose,
    embedded,
    found_at,
    mapping_get,
    same_position,
    scalar_text,
)

SOURCE = "workflow"
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


def find(path: str, text: str) -> Searched:
    where = Located(text, path, SOURCE)
    found: list[Found] = []
    documents = compose(text)
    for document in documents:
        jobs = mapping_get(document, "jobs")
        for _, job in jobs.value if isinstance(jobs, MappingNode) else ():
            found.extend(_job(job, where))
        runs = mapping_get(document, "runs")
        if isinstance(runs, MappingNode):
            found.extend(_scalar(mapping_get(runs, "image"), where, _DOCKER))
            found.extend(_steps(mapping_get(runs, "steps"), _Images(where, None)))
    return Searched(sorted(found, key=lambda f: f.span.start), documents)


@dataclass(frozen=True)
class _Images:
    """Reads image values in one job: a value itself, or the matrix values a matrix expression takes."""

    where: Located
    job: Node | None  # None outside a job (a composite action's steps): no matrix to take values from

    def at(self, node: Node | None, to_file: Callable[[int], int] = same_position) -> list[Found]:
        expression = _MATRIX.fullmatch(str(node.value)) if isinstance(node, ScalarNode) else None
        if expression is None or self.job is None:
            return _scalar(node, self.where, to_file=to_file)
        drawn = _draw(self.job, _matrix_path(expression.group("path")))
        found = [item for value in drawn.values if (item := _value(value, self.where)) is not None]
        if drawn.gaps:  # some runs' values cannot be read here: the expression stays reported, saying why
            more = f" (and {len(drawn.gaps) - 1} more)" if len(drawn.gaps) > 1 else ""
            found.extend(replace(item, problem=f"{item.problem}: {drawn.gaps[0]}{more}")
                         for item in _scalar(node, self.where, to_file=to_file))
        return found


def _job(job: Node, where: Located) -> list[Found]:
    images = _Images(where, job)
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


@dataclass(frozen=True)
class _Matrix:
    """A job's `strategy.matrix` as written: lists under its own keys, `include` and `exclude` entries."""

    node: MappingNode

    def own(self, key: str) -> Node | None:
        return None if key in _NOT_MATRIX_KEYS else mapping_get(self.node, key)

    def entries(self, kind: str) -> list[Node]:
        """The `include` or `exclude` entries."""
        return _items(mapping_get(self.node, kind))

    @functools.cached_property
    def runs(self) -> list[dict[str, Node]] | None:
        """The runs the own keys make, less the excluded ones; None when they cannot all be read.

        Without own keys there are none: each include entry is then a run of its own.
        """
        names = [name for name in _keys(self.node) if name not in _NOT_MATRIX_KEYS]
        lists = [self.own(name) for name in names]
        if not all(isinstance(values, SequenceNode) for values in lists):
            return None
        product = itertools.product(*(_items(values) for values in lists)) if names else iter(())
        runs = [dict(zip(names, values, strict=True)) for values in itertools.islice(product, _MAX_RUNS + 1)]
        if len(runs) > _MAX_RUNS:
            return None
        return [run for run in runs if not any(_excludes(entry, run) for entry in self.entries("exclude"))]

    def every_run_gets(self, key: str) -> bool:
        """Whether every run of the own keys matches an include entry holding `key`."""
        holders = [entry for entry in self.entries("include") if mapping_get(entry, key) is not None]
        return self.runs is not None and all(any(_matches(entry, run) for entry in holders) for run in self.runs)

    def adds_a_run(self, entry: Node) -> bool:
        """Whether an include entry matches none of the own keys' runs, and so is a run of its own."""
        return self.runs is None or not any(_matches(entry, run) for run in self.runs)

    def excluded(self, path: list[str], written: set[str]) -> list[ScalarNode]:
        """The `exclude` values at `path` that equal a value in `written`: an exclude matches runs by value."""
        found: list[ScalarNode] = []
        for entry in self.entries("exclude"):
            value = _follow(entry, path)
            if isinstance(value, ScalarNode) and str(value.value) in written:
                found.append(value)
        return found


@dataclass
class _Drawn:
    """The scalars a matrix expression takes across a job's runs, and why some runs' values cannot be read."""

    values: list[ScalarNode] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)

    def take(self, node: Node, path: list[str]) -> None:
        """The value at `path` below `node`, an entry of the matrix."""
        value = _follow(node, path)
        if isinstance(value, ScalarNode):
            self.values.append(value)
        elif value is None:
            self.gaps.append(f"the matrix entry at line {_line(node)} has no `{'.'.join(path)}`")
        else:
            self.gaps.append(f"the matrix value at line {_line(value)} is not a single value")

    def take_own(self, matrix: _Matrix, path: list[str]) -> None:
        """The values in the list under the own key, and the `exclude` values naming one of them."""
        key, rest = path[0], path[1:]
        own = matrix.own(key)
        if isinstance(own, SequenceNode):
            for item in own.value:
                self.take(item, rest)
            self.values.extend(matrix.excluded(path, {str(value.value) for value in self.values}))
        elif own is not None:
            self.gaps.append(f"matrix `{key}` is not a list written out in the workflow")
        elif not matrix.every_run_gets(key):
            self.gaps.append(f"some runs of the matrix's own keys get no `{key}` from an include entry")

    def take_included(self, matrix: _Matrix, path: list[str]) -> None:
        """The values of `include` entries; an entry without one that is a run of its own is a gap."""
        key, rest = path[0], path[1:]
        if not isinstance(mapping_get(matrix.node, "include"), SequenceNode | None):
            self.gaps.append("matrix `include` is not a list written out in the workflow")
        for entry in matrix.entries("include"):
            value = mapping_get(entry, key)
            if value is not None:
                self.take(value, rest)
            elif matrix.adds_a_run(entry):
                self.gaps.append(f"the include entry at line {_line(entry)} has no `{key}`")


def _draw(job: Node, path: list[str]) -> _Drawn:
    """What `matrix.<path>` takes in a job's runs.

    The values are those of the own list, of `include` entries, and of the `exclude`
    entries that name an own value: those are pinned with it, or they would stop matching.
    """
    strategy = mapping_get(job, "strategy")
    node = mapping_get(strategy, "matrix") if strategy is not None else None
    if not isinstance(node, MappingNode):
        return _Drawn(gaps=["the job's strategy.matrix is not written out in the workflow"])
    matrix = _Matrix(node)
    if matrix.own(path[0]) is None and all(mapping_get(entry, path[0]) is None for entry in matrix.entries("include")):
        return _Drawn(gaps=[f"no `{path[0]}` in the job's strategy.matrix"])
    drawn = _Drawn()
    drawn.take_own(matrix, path)
    drawn.take_included(matrix, path)
    return drawn


def _items(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def _follow(node: Node, path: list[str]) -> Node | None:
    value: Node | None = node
    for key in path:
        value = mapping_get(value, key) if value is not None else None
    return value


def _matches(entry: Node, run: dict[str, Node]) -> bool:
    """Whether an include entry agrees with a run on every key the run has."""
    if not isinstance(entry, MappingNode):
        return False
    return all(_same(value, run[name]) for key, value in entry.value
               if (name := scalar_text(key)) is not None and name in run)


def _excludes(entry: Node, run: dict[str, Node]) -> bool:
    """Whether an exclude entry names only keys of the run, each with the run's value."""
    return _matches(entry, run) and run.keys() >= set(_keys(entry))


def _same(a: Node, b: Node) -> bool:
    text = scalar_text(a)
    return a is b or (text is not None and text == scalar_text(b))


def _keys(node: Node) -> list[str]:
    pairs = node.value if isinstance(node, MappingNode) else []
    return [key for key_node, _ in pairs if (key := scalar_text(key_node)) is not None]


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1
