"""Whether a Helm chart at hand reads an image block's `digest` (or `sha`) from its values.

A values file pinned by filling `image.digest` is pinned only if the chart's
templates use that field; many charts render `repository:tag` and never look.
pinguard does not run Helm: it reads the templates' text for the two ways a
value reaches a pod spec:

- by name: `.Values.controller.image.digest` (or `index .Values "controller" ...`);
- whole: the block (or a mapping above it) handed on, as in
  `include "common.images.image" (dict "imageRoot" .Values.controller.image)`,
  to a helper that reads `.digest` from whatever it was given.

The same reading says what an empty tag renders: the chart's appVersion, where
a template defaults the tag to it and to nothing else (`app_version_tag`); and
`helm_text` says how Helm reads a YAML scalar (`1.10` unquoted is the number 1.1).

Subcharts (folders or `.tgz` archives under `charts/`) read the values under
their name or alias. A block handed to a named template the chart does not hold (a
library chart fetched at build time) is neither read nor unread: `reads` says None.

What cannot be read within the bounds below counts as not read: a chart too large
to read, or whose reading would cost more than `_MAX_WORK`, reads nothing. The
caller then pins in the tag form, which works whatever the chart reads, and a
digest written in the values is reported, never counted. Every step costs at most
a fixed amount per character of the chart: templates are read in one pass each,
scopes are places in them, never copies, and what answering a question searches is
counted.
"""
from __future__ import annotations

import bisect
import decimal
import gzip
import io
import itertools
import math
import re
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.sources.base import SourceError
from pinguard.sources.yamlnodes import compose, mapping_get, scalar_text

_SEARCHED_UP = 3  # a values file beside Chart.yaml, or in a folder below it (ci/, values/)
_MAX_FILE_BYTES = 1 << 20
_MAX_TOTAL_BYTES = 32 << 20  # files read, and every byte a packaged subchart unpacks to
_MAX_FILES = 5000  # files, folders listed, members of packaged subcharts
_MAX_DEPTH = 4  # subcharts of subcharts
_MAX_WORK = 32 << 20  # characters searched answering what a chart reads: its largest template 32 times over
_STEP = 64  # what following one `include` costs, counted in characters searched
_UNPACK_CHUNK = 1 << 16
_CACHED_CHARTS = 256  # charts one scan keeps read
_CACHED_BYTES = _MAX_TOTAL_BYTES  # ... and what they were read from, all together: the largest chart, or many

_CHAIN = re.compile(r"(index\s+)?\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)*)((?:\s+\"[^\"\n]*\")*)")
_QUOTED = re.compile(r"\"([^\"\n]*)\"")
_INCLUDED = re.compile(r"\b(?:include|template)\s+\"([^\"\n]+)\"")
_DEFINE = re.compile(r"^\s*(?:define|block)\s+\"([^\"\n]+)\"")
_OPENS = re.compile(r"^\s*(?:if|with|range|define|block)\b")
_ENDS = re.compile(r"^\s*end\b")
_IF = re.compile(r"\s*if\b")
_FAIL = re.compile(r"\{\{-?\s*fail\b")
_WITH = re.compile(r"\s*(?:with|range)\b")
_ASSIGNS = re.compile(r"\$\w+\s*=")
_SHA_AFTER_PREFIX = re.compile(r"sha256:(?:\{\{|%s)")
# A tag defaulted to the chart's appVersion and nothing else: `.tag | default .Chart.AppVersion`, or
# `default $.Chart.AppVersion .tag`, ending the action or a parenthesis (a `printf "v%s"` around it does not count).
_APP_VERSION = r"\$?\w*(?:\.\w+)*?\.Chart\.AppVersion"
_ENDS_HERE = r"\s*(?:\|\s*(?:toString|quote|squote)\s*)?(?:\)|-?\}\}|$)"
_DEFAULTED_AFTER = re.compile(rf"\s*\|\s*default\s+{_APP_VERSION}{_ENDS_HERE}")
_DEFAULTED_BEFORE = re.compile(rf"\bdefault\s+{_APP_VERSION}\s+$")
_ACTION_ENDS = re.compile(_ENDS_HERE)
_LOOK_BEHIND = 128  # how far before a `.Values` chain `default .Chart.AppVersion` is looked for


class TooLarge(Exception):
    """A chart beyond the bounds: it counts as reading nothing."""


class _Budget:
    """Bounds on what one chart (its subcharts included) may make pinguard read and search."""

    def __init__(self) -> None:
        self.files = _MAX_FILES
        self.bytes = _MAX_TOTAL_BYTES
        self.work = _MAX_WORK

    def take(self, size: int) -> None:
        """One file (or folder, or archive member) of `size` bytes."""
        self.files -= 1
        self.unpack(size)
        if self.files < 0 or size > _MAX_FILE_BYTES:
            raise TooLarge()

    def unpack(self, size: int) -> None:
        self.bytes -= size
        if self.bytes < 0:
            raise TooLarge()

    def spend(self, characters: int) -> None:
        self.work -= characters
        if self.work < 0:
            raise TooLarge()


class _Action(NamedTuple):
    """One `{{ ... }}`: where it starts and ends in its file, and what it says, trim markers removed."""

    start: int
    end: int
    body: str


class _Template:
    """One template file: its text, where it names templates to include and where it fails (a pass each)."""

    def __init__(self, text: str) -> None:
        self.text = text
        included = list(_INCLUDED.finditer(text))
        self._starts = [match.start() for match in included]
        self._named = [(match.end(), match.group(1)) for match in included]
        self._fails = [(match.start(), match.end()) for match in _FAIL.finditer(text)]

    def fails(self, start: int, end: int) -> bool:
        """Whether a `{{ fail ... }}` lies within [start, end)."""
        first = bisect.bisect_left(self._fails, (start, start))
        return first < len(self._fails) and self._fails[first][1] <= end

    def included(self, start: int, end: int, budget: _Budget) -> Iterator[str]:
        """The named templates included within [start, end), each charged to the budget."""
        for match_end, name in itertools.islice(self._named, bisect.bisect_left(self._starts, start), None):
            if match_end > end:
                return
            budget.spend(_STEP)
            yield name


@dataclass(frozen=True)
class _Region:
    """Characters [start, end) of a template: a scope or a named template's body, never a copy of it."""

    template: _Template
    start: int
    end: int

    def mentions(self, key: str, budget: _Budget) -> bool:
        """Whether the text reads `key` by name, loosely: `"key"`, or `.key` ending at a word boundary."""
        budget.spend(_STEP + self.end - self.start)
        text = self.template.text
        if text.find(f'"{key}"', self.start, self.end) >= 0:
            return True
        dotted = "." + key
        last_is_word = _is_word(dotted[-1])
        at = text.find(dotted, self.start, self.end)
        while at >= 0:
            after = at + len(dotted)
            if last_is_word != (after < self.end and _is_word(text[after])):
                return True
            at = text.find(dotted, at + 1, self.end)
        return False

    def included(self, budget: _Budget) -> Iterator[str]:
        return self.template.included(self.start, self.end, budget)

    def defaults_to_app_version(self, key: str, budget: _Budget) -> bool:
        """Whether the text defaults field `key` of what it handles to the chart's appVersion, and to nothing else."""
        budget.spend(2 * (_STEP + self.end - self.start))
        field = rf"\$?\w*(?:\.\w+)*\.{re.escape(key)}"
        after = re.compile(rf"\.{re.escape(key)}{_DEFAULTED_AFTER.pattern}")
        before = re.compile(rf"\bdefault\s+{_APP_VERSION}\s+{field}{_ENDS_HERE}")
        text = self.template.text
        return bool(after.search(text, self.start, self.end) or before.search(text, self.start, self.end))


def _is_word(character: str) -> bool:
    """A word character as regular expressions' `\\b` sees one."""
    return character.isalnum() or character == "_"


@dataclass(frozen=True)
class _Use:
    """One place a template takes a values path, and the text that then works with it."""

    keys: tuple[str, ...]
    scope: _Region | None  # `with`/`range` body, or what follows a `$var :=`; None when used where it stands
    helpers: tuple[str, ...]  # templates it is handed to with `include`/`template`
    app_version_default: bool = False  # `.Values.x.tag | default .Chart.AppVersion`, where it stands


@dataclass
class _Uses:
    """The uses of a chart's values, as a tree of their paths: one step a key."""

    here: list[_Use] = field(default_factory=list)  # uses of exactly the path that leads here
    below: dict[str, _Uses] = field(default_factory=dict)

    def add(self, use: _Use) -> None:
        node = self
        for key in use.keys:
            child = node.below.get(key)
            if child is None:
                child = node.below[key] = _Uses()
            node = child
        node.here.append(use)


@dataclass
class Chart:
    """What one chart's templates read from its values, with its subcharts by values key.

    `helpers` (named templates, `define`) are shared by a chart and all its subcharts, as in Helm;
    so is the budget that bounds answering `reads`.
    """

    helpers: dict[str, _Region]
    budget: _Budget = field(default_factory=_Budget)
    uses: _Uses = field(default_factory=_Uses)
    subcharts: dict[str, Chart] = field(default_factory=dict)
    sha_after_prefix: bool = False  # templates write `@sha256:{{ .sha }}`: `sha:` holds bare hex
    app_version: str | None = None  # Chart.yaml's `appVersion`, as Helm renders it

    def sha_is_hex(self, block: tuple[str, ...]) -> bool:
        """Whether the chart that renders `block` writes `sha256:` itself before the `sha:` value.

        Prometheus community charts differ: node-exporter writes `@sha256:{{ .sha }}`,
        kube-state-metrics `printf "%s@%s" ... .sha`, which needs the whole digest.
        """
        sub = self.subcharts.get(block[0]) if block else None
        return sub.sha_is_hex(block[1:]) if sub is not None else self.sha_after_prefix

    def reads(self, block: tuple[str, ...], name: str) -> bool | None:
        """Whether the templates read field `name` of the values block at `block`.

        None: they hand the block to a named template the chart does not hold (a library
        chart not vendored under `charts/`), so nobody can tell. False as well when the
        answer would cost more than the budget allows: what is not read counts as not read.
        """
        try:
            return self._reads(block, name)
        except TooLarge:
            return False

    def _reads(self, block: tuple[str, ...], name: str) -> bool | None:
        wanted = (*block, name)
        self.budget.spend(len(wanted))
        handed: list[_Use] = []  # uses of a mapping at or above the block: what their text reads decides
        node = self.uses
        for depth, key in enumerate(wanted):
            child = node.below.get(key)
            if child is None:
                break
            node = child
            if depth < len(block):
                handed.extend(node.here)
        else:
            return True  # the field itself is taken, or something below it
        unknown = False
        for use in handed:
            regions, missing = self._closure(use)
            rest = [key for key in block[len(use.keys):] if key != "[]"]
            if all(any(region.mentions(key, self.budget) for region in regions) for key in (name, *rest)):
                return True
            unknown = unknown or missing
        sub = self.subcharts.get(block[0]) if block else None
        if sub is not None and (read := sub._reads(block[1:], name)) is not False:
            return read
        return None if unknown else False

    def app_version_tag(self, block: tuple[str, ...], key: str) -> str | None:
        """The tag the chart renders when field `key` (`tag`, `version`) of the values block at `block` is empty:
        its appVersion, where the templates visibly default that field to it; else None (only Helm can tell).

        A subchart's block defaults to the subchart's own appVersion, as `.Chart` is the subchart's there.
        """
        try:
            return self._app_version_tag(block, key)
        except TooLarge:
            return None

    def _app_version_tag(self, block: tuple[str, ...], key: str) -> str | None:
        self.budget.spend(len(block) + 1)
        handed: list[_Use] = []
        node: _Uses | None = self.uses
        for depth, step in enumerate((*block, key)):
            node = node.below.get(step) if node is not None else None
            if node is not None and depth < len(block):
                handed.extend(node.here)
        defaulted = node is not None and any(use.app_version_default for use in node.here)
        for use in handed:
            if defaulted:
                break
            regions, _ = self._closure(use)
            rest = [step for step in block[len(use.keys):] if step != "[]"]
            defaulted = (all(any(region.mentions(step, self.budget) for region in regions) for step in rest)
                         and any(region.defaults_to_app_version(key, self.budget) for region in regions))
        if defaulted:
            return self.app_version
        sub = self.subcharts.get(block[0]) if block else None
        return sub._app_version_tag(block[1:], key) if sub is not None else None

    def _closure(self, use: _Use) -> tuple[list[_Region], bool]:
        """The text that handles a handed-on value: its scope and every helper reached from it;
        and whether a helper reached is not in the chart."""
        regions = [use.scope] if use.scope is not None else []
        pending = [*use.helpers, *(use.scope.included(self.budget) if use.scope is not None else ())]
        seen: set[str] = set()
        missing = False
        while pending:
            helper = pending.pop()
            self.budget.spend(_STEP)
            if helper in seen:
                continue
            seen.add(helper)
            region = self.helpers.get(helper)
            if region is None:
                missing = True
                continue
            regions.append(region)
            pending.extend(region.included(self.budget))
        return regions, missing


def chart_root(values_path: str) -> Path | None:
    """The folder of the chart a values file belongs to: the nearest one above it with a Chart.yaml."""
    folder = Path(values_path).parent
    for _ in range(_SEARCHED_UP):
        if (folder / "Chart.yaml").is_file():
            return folder
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


class ChartCache:
    """The charts one scan has read, each once: every values file of a chart is read against the same reading.

    Bounded: beyond `_CACHED_CHARTS` charts, or `_CACHED_BYTES` read from their files, the chart asked for least
    recently is let go, and read again if asked for again.
    """

    def __init__(self) -> None:
        self._charts: dict[str, Chart | None] = {}  # by chart folder, the least recently asked for first
        self._bytes = 0

    def chart_at_hand(self, values_path: str) -> Chart | None:
        """The chart a values file belongs to; None when there is none, or it cannot be read.

        A chart beyond the bounds is one that reads nothing.
        """
        root = chart_root(values_path)
        if root is None:
            return None
        key = str(root.resolve())
        if key in self._charts:
            chart = self._charts.pop(key)
        else:
            chart = _read_chart(root)
            self._bytes += _bytes_read(chart)
        self._charts[key] = chart
        while len(self._charts) > 1 and (len(self._charts) > _CACHED_CHARTS or self._bytes > _CACHED_BYTES):
            self._bytes -= _bytes_read(self._charts.pop(next(iter(self._charts))))
        return chart


def _read_chart(root: Path) -> Chart | None:
    try:
        sizes = {path: path.stat().st_size for path in _chart_files(root)}
        return _read_files(root, sizes, _Budget())
    except TooLarge:
        return Chart({})
    except OSError:
        return None


def _bytes_read(chart: Chart | None) -> int:
    """What reading the chart took from its budget: its files, and what its packaged subcharts unpacked to."""
    return 0 if chart is None else _MAX_TOTAL_BYTES - chart.budget.bytes


def _chart_files(root: Path) -> list[Path]:
    """The files whose change changes what the chart reads: Chart.yaml, templates, subcharts.

    Every entry listed counts against `_MAX_FILES`: a tree of empty folders is no free walk.
    """
    files = [root / "Chart.yaml"]
    listed = 0
    for folder in (root / "templates", root / "charts"):
        if folder.is_dir():
            found = []
            for path in folder.rglob("*"):
                listed += 1
                if listed > _MAX_FILES:
                    raise TooLarge()
                if path.is_file():
                    found.append(path)
            files.extend(sorted(found))
    return files


def _read_files(root: Path, sizes: dict[Path, int], budget: _Budget) -> Chart:
    """The chart from its files (as `_chart_files` lists them, with their sizes)."""
    contents: dict[str, bytes] = {}
    for path, size in sizes.items():
        budget.take(size)
        contents[path.relative_to(root).as_posix()] = path.read_bytes()
    return _chart(contents, budget, {}, depth=0)


def _chart(contents: dict[str, bytes], budget: _Budget, helpers: dict[str, _Region], depth: int) -> Chart:
    """A chart from its files, keyed by path relative to its folder; its helpers join `helpers`."""
    chart = Chart(helpers, budget, app_version=_app_version(contents.get("Chart.yaml", b"")))
    for name, data in contents.items():
        if name.startswith("templates/"):
            text = data.decode("utf-8", "replace")
            for use in _uses(_Template(text), helpers):
                chart.uses.add(use)
            chart.sha_after_prefix = chart.sha_after_prefix or _SHA_AFTER_PREFIX.search(text) is not None
    if depth >= _MAX_DEPTH:
        return chart
    aliases = _aliases(contents.get("Chart.yaml", b""))
    for folder, sub_contents in _subcharts(contents, budget):
        name = _chart_name(sub_contents.get("Chart.yaml", b"")) or folder
        sub = _chart(sub_contents, budget, helpers, depth + 1)
        for key in aliases.get(name, [name]):
            chart.subcharts[key] = sub
    return chart


def _uses(template: _Template, helpers: dict[str, _Region]) -> Iterator[_Use]:
    """Every `.Values` path one template file takes; the named templates it defines go into `helpers`."""
    actions = _actions(template.text)
    closing = _closing(actions)
    for number, action in enumerate(actions):
        end = closing[number]
        body_end = actions[end].start if end < len(actions) else len(template.text)
        defined = _DEFINE.match(action.body)
        if defined:
            helpers[defined.group(1)] = _Region(template, action.end, body_end)
        if _IF.match(action.body) and template.fails(action.end, body_end):
            continue  # `{{ if .Values.image.sha }}{{ fail "use digest" }}`: read only to be refused
        chains = list(_CHAIN.finditer(action.body))
        if not chains:
            continue
        scope = _scope(template, action, body_end)
        included = tuple(_INCLUDED.findall(action.body))
        for chain in chains:
            keys = tuple(chain.group(2).split(".")[1:])
            if chain.group(1):  # `index .Values "a" "b-c"`: quoted keys follow
                keys += tuple(_QUOTED.findall(chain.group(3)))
            yield _Use(keys, scope, included, _defaulted_to_app_version(action.body, chain))


def _defaulted_to_app_version(body: str, chain: re.Match[str]) -> bool:
    """Whether an action defaults the value a chain takes to the chart's appVersion: `x | default .Chart.AppVersion`
    or `default .Chart.AppVersion x`, the action or a parenthesis ending there."""
    if _DEFAULTED_AFTER.match(body, chain.end()):
        return True
    ends_here = _ACTION_ENDS.match(body, chain.end()) is not None
    return ends_here and _DEFAULTED_BEFORE.search(body, max(0, chain.start() - _LOOK_BEHIND), chain.start()) is not None


def _actions(text: str) -> list[_Action]:
    """Every `{{ ... }}` of a template, in order.

    Found with `find`, not a lazy regular expression: that would search from every
    `{{` to the end of a text where one is left open.
    """
    actions: list[_Action] = []
    position = 0
    while (start := text.find("{{", position)) >= 0:
        close = text.find("}}", start + 2)
        if close < 0:
            break  # left open: so is every `{{` after it
        actions.append(_Action(start, close + 2, text[start + 2:close].removeprefix("-").removesuffix("-")))
        position = close + 2
    return actions


def _closing(actions: list[_Action]) -> list[int]:
    """For each action that opens a block, the number of its matching `end`; len(actions) when none."""
    closing = [len(actions)] * len(actions)
    opened: list[int] = []
    for number, action in enumerate(actions):
        if _OPENS.match(action.body):
            opened.append(number)
        elif _ENDS.match(action.body) and opened:
            closing[opened.pop()] = number
    return closing


def _scope(template: _Template, action: _Action, body_end: int) -> _Region | None:
    """What works with a value an action takes: the body of a `with`/`range`, what follows a `:=`."""
    if _WITH.match(action.body):
        return _Region(template, action.end, body_end)
    if ":=" in action.body or _ASSIGNS.search(action.body):
        return _Region(template, action.end, len(template.text))
    return None


def _subcharts(contents: dict[str, bytes], budget: _Budget) -> Iterator[tuple[str, dict[str, bytes]]]:
    """Each subchart's files: from `charts/NAME/` folders and `charts/*.tgz` archives."""
    folders: dict[str, dict[str, bytes]] = {}
    for name, data in contents.items():
        parts = PurePosixPath(name).parts
        if len(parts) > 2 and parts[0] == "charts":
            folders.setdefault(parts[1], {})["/".join(parts[2:])] = data
        elif len(parts) == 2 and parts[0] == "charts" and name.endswith(".tgz"):
            archived = _archive(data, budget)
            if archived is not None:
                yield archived
    yield from folders.items()


class _Unpacked(io.RawIOBase):
    """A packaged subchart's tar stream, every byte it unpacks to charged to the budget as it is read."""

    def __init__(self, data: bytes, budget: _Budget) -> None:
        super().__init__()
        self._gzip = gzip.GzipFile(fileobj=io.BytesIO(data))
        self._budget = budget

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk = self._gzip.read(size if 0 <= size <= _UNPACK_CHUNK else _UNPACK_CHUNK)
        self._budget.unpack(len(chunk))
        return chunk


def _archive(data: bytes, budget: _Budget) -> tuple[str, dict[str, bytes]] | None:
    """A packaged subchart: `NAME/Chart.yaml`, `NAME/templates/...` inside a gzipped tar.

    Read as a stream: every member (folders, links and devices too) counts against the
    budget, and so does every byte unpacked, headers and long names included.
    """
    contents: dict[str, bytes] = {}
    top = ""
    try:
        with tarfile.open(fileobj=_Unpacked(data, budget), mode="r|") as archive:
            for member in archive:
                budget.take(0)
                if not member.isfile():
                    continue
                top, _, relative = member.name.partition("/")
                if relative == "Chart.yaml" or relative.startswith(("templates/", "charts/")):
                    if member.size > _MAX_FILE_BYTES:
                        raise TooLarge()
                    extracted = archive.extractfile(member)
                    if extracted is not None:
                        contents[relative] = extracted.read()
    except (tarfile.TarError, OSError, EOFError, zlib.error):
        return None
    return (top, contents) if top else None


def _chart_name(data: bytes) -> str | None:
    return scalar_text(mapping_get(_meta(data), "name"))


def _aliases(data: bytes) -> dict[str, list[str]]:
    """Dependency name -> the values keys it reads: its name, or each alias it is used under."""
    dependencies = mapping_get(_meta(data), "dependencies")
    aliases: dict[str, list[str]] = {}
    for dependency in dependencies.value if isinstance(dependencies, SequenceNode) else []:
        name = scalar_text(mapping_get(dependency, "name"))
        if name is not None:
            alias = scalar_text(mapping_get(dependency, "alias"))
            aliases.setdefault(name, []).append(alias if alias is not None else name)
    return aliases


def _app_version(data: bytes) -> str | None:
    """A Chart.yaml's `appVersion` as Helm renders it (`1.10` unquoted is the number 1.1); None when absent."""
    node = mapping_get(_meta(data), "appVersion")
    return helm_text(node) if isinstance(node, ScalarNode) and scalar_text(node) else None


def helm_text(node: ScalarNode) -> str | None:
    """What Helm renders for a YAML scalar it reads from values or Chart.yaml; None where it fails to read it.

    Helm reads YAML 1.1 as go-yaml does, then passes it through JSON: an unquoted `1.10` is the
    number 1.1, `20240101` prints as `2.0240101e+07`, `010` is octal 8, `yes` is `true`.
    """
    text = str(node.value)
    if node.style not in (None, ""):
        return text
    if text in _YAML_BOOLEANS:
        return _YAML_BOOLEANS[text]
    plain = text.replace("_", "")
    if len(plain) <= _GO_INT_DIGITS and _GO_INT.fullmatch(plain):
        digits = plain.lstrip("+-")
        octal = len(digits) > 1 and digits[0] == "0" and digits[1] not in "xXoObB"
        number = (-1 if plain[0] == "-" else 1) * int(digits, 8 if octal else 0)
        if -(1 << 63) <= number < (1 << 64):  # what go-yaml reads as an integer, then JSON as a float64
            return _go_float(float(number))
        if not digits.isdigit():
            return text  # hexadecimal beyond 64 bits: a string to go-yaml
    if _YAML_FLOAT.fullmatch(plain):
        value = float(plain)
        return _go_float(value) if math.isfinite(value) else None
    return text


_YAML_BOOLEANS = dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), "true") | (
    dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), "false"))
_GO_INT_DIGITS = 70  # longer than any 64-bit integer in any base, with its prefix and sign
_GO_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")


def _go_float(value: float) -> str:
    """A float64 as Go's `fmt` prints it with `%v`: shortest digits, an exponent below 1e-4 and from 1e6."""
    sign, digits, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    shown = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exponent  # where the decimal point falls after the digits' first
    if shown == "0":
        return "-0" if sign else "0"
    if not -4 <= point - 1 < 6:
        mantissa = shown[0] + ("." + shown[1:] if len(shown) > 1 else "")
        return f"{'-' if sign else ''}{mantissa}e{point - 1:+03d}"
    if point <= 0:
        body = "0." + "0" * -point + shown
    elif point >= len(shown):
        body = shown + "0" * (point - len(shown))
    else:
        body = shown[:point] + "." + shown[point:]
    return ("-" if sign else "") + body


def _meta(data: bytes) -> Node:
    """A Chart.yaml's mapping, parsed as the sources parse YAML; an empty one where it is none."""
    try:
        documents = compose(data.decode("utf-8", "replace"))
    except SourceError:
        documents = []
    return documents[0] if documents and isinstance(documents[0], MappingNode) else MappingNode("", [])
