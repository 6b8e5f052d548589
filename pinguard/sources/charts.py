"""Whether a Helm chart at hand reads an image block's `digest` (or `sha`) from its values.

A values file pinned by filling `image.digest` is pinned only if the chart's
templates use that field; many charts render `repository:tag` and never look.
pinguard does not run Helm: it reads the templates' text for the two ways a
value reaches a pod spec:

- by name: `.Values.controller.image.digest` (or `index .Values "controller" ...`);
- whole: the block (or a mapping above it) handed on, as in
  `include "common.images.image" (dict "imageRoot" .Values.controller.image)`,
  to a helper that reads `.digest` from whatever it was given.

Subcharts (folders or `.tgz` archives under `charts/`) read the values under
their name or alias. What cannot be read within the bounds below counts as not
read: the caller then pins in the tag form, which works whatever the chart reads.
A block handed to a named template the chart does not hold (a library chart fetched
at build time) is neither read nor unread: `reads` says None.
"""
from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml

_SEARCHED_UP = 3  # a values file beside Chart.yaml, or in a folder below it (ci/, values/)
_MAX_FILE_BYTES = 1 << 20
_MAX_TOTAL_BYTES = 32 << 20
_MAX_FILES = 5000
_MAX_DEPTH = 4  # subcharts of subcharts

_ACTION = re.compile(r"\{\{-?(.*?)-?\}\}", re.DOTALL)
_CHAIN = re.compile(r"(index\s+)?\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)*)((?:\s+\"[^\"\n]*\")*)")
_QUOTED = re.compile(r"\"([^\"\n]*)\"")
_INCLUDED = re.compile(r"\b(?:include|template)\s+\"([^\"\n]+)\"")
_DEFINE = re.compile(r"^\s*(?:define|block)\s+\"([^\"\n]+)\"")
_OPENS = re.compile(r"^\s*(?:if|with|range|define|block)\b")
_ENDS = re.compile(r"^\s*end\b")
_SHA_AFTER_PREFIX = re.compile(r"sha256:(?:\{\{|%s)")


class TooLarge(Exception):
    """A chart beyond the bounds: its templates are not read."""


@dataclass(frozen=True)
class _Use:
    """One place a template takes a values path, and the text that then works with it."""

    keys: tuple[str, ...]
    scope: str  # `with`/`range` body, or what follows a `$var :=`; empty when used where it stands
    helpers: tuple[str, ...]  # templates it is handed to with `include`/`template`


@dataclass
class Chart:
    """What one chart's templates read from its values, with its subcharts by values key.

    `helpers` (named templates, `define`) are shared by a chart and all its subcharts, as in Helm.
    """

    helpers: dict[str, str]
    uses: list[_Use] = field(default_factory=list)
    subcharts: dict[str, Chart] = field(default_factory=dict)
    sha_after_prefix: bool = False  # templates write `@sha256:{{ .sha }}`: `sha:` holds bare hex

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
        chart not vendored under `charts/`), so nobody can tell.
        """
        wanted = (*block, name)
        unknown = False
        for use in self.uses:
            if use.keys[:len(wanted)] == wanted:
                return True
            if 0 < len(use.keys) <= len(block) and block[:len(use.keys)] == use.keys:
                text, missing = self._closure(use)
                if _reads_field(text, block[len(use.keys):], name):
                    return True
                unknown = unknown or missing
        sub = self.subcharts.get(block[0]) if block else None
        if sub is not None and (read := sub.reads(block[1:], name)) is not False:
            return read
        return None if unknown else False

    def _closure(self, use: _Use) -> tuple[str, bool]:
        """The text that handles a handed-on value: its scope and every helper reached from it;
        and whether a helper reached is not in the chart."""
        texts = [use.scope]
        pending = [*use.helpers, *_INCLUDED.findall(use.scope)]
        seen: set[str] = set()
        missing = False
        while pending:
            helper = pending.pop()
            if helper in seen:
                continue
            seen.add(helper)
            if helper not in self.helpers:
                missing = True
                continue
            texts.append(self.helpers[helper])
            pending.extend(_INCLUDED.findall(self.helpers[helper]))
        return "\n".join(texts), missing


def _reads_field(text: str, rest: tuple[str, ...], name: str) -> bool:
    """Whether text handed a mapping reads `name` of what lies at `rest` below it (loosely: by key names)."""
    field_read = re.search(rf"\.{re.escape(name)}\b|\"{re.escape(name)}\"", text) is not None
    return field_read and all(re.search(rf"\.{re.escape(key)}\b|\"{re.escape(key)}\"", text) for key in rest
                              if key != "[]")


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


_loaded: dict[tuple[str, tuple[tuple[str, int, int], ...]], Chart | None] = {}


def chart_at_hand(values_path: str) -> Chart | None:
    """The chart a values file belongs to, read once per run (and again when its files change)."""
    root = chart_root(values_path)
    if root is None:
        return None
    try:
        files = {path: path.stat() for path in _chart_files(root)}
    except OSError:
        return None
    key = (str(root.resolve()), tuple((str(p), s.st_mtime_ns, s.st_size) for p, s in files.items()))
    if key not in _loaded:
        try:
            _loaded[key] = _read_files(root, {path: stat.st_size for path, stat in files.items()}, _Budget())
        except (OSError, TooLarge):
            _loaded[key] = None
    return _loaded[key]


def _chart_files(root: Path) -> Iterator[Path]:
    """The files whose change changes what the chart reads: Chart.yaml, templates, subcharts."""
    yield root / "Chart.yaml"
    for folder in (root / "templates", root / "charts"):
        if folder.is_dir():
            yield from sorted(p for p in folder.rglob("*") if p.is_file())


class _Budget:
    """Bounds on what one chart may make pinguard read."""

    def __init__(self) -> None:
        self.files = _MAX_FILES
        self.bytes = _MAX_TOTAL_BYTES

    def take(self, size: int) -> None:
        self.files -= 1
        self.bytes -= size
        if self.files < 0 or self.bytes < 0 or size > _MAX_FILE_BYTES:
            raise TooLarge()


def _read_files(root: Path, sizes: dict[Path, int], budget: _Budget) -> Chart:
    """The chart from its files (as `_chart_files` lists them, with their sizes)."""
    contents: dict[str, bytes] = {}
    for path, size in sizes.items():
        budget.take(size)
        contents[path.relative_to(root).as_posix()] = path.read_bytes()
    return _chart(contents, budget, {}, depth=0)


def _chart(contents: dict[str, bytes], budget: _Budget, helpers: dict[str, str], depth: int) -> Chart:
    """A chart from its files, keyed by path relative to its folder; its helpers join `helpers`."""
    chart = Chart(helpers)
    for name, data in contents.items():
        if name.startswith("templates/"):
            text = data.decode("utf-8", "replace")
            chart.uses.extend(_uses(text, helpers))
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


def _uses(text: str, helpers: dict[str, str]) -> list[_Use]:
    """Every `.Values` path one template file takes, and the named templates it defines (into `helpers`)."""
    actions = list(_ACTION.finditer(text))
    uses: list[_Use] = []
    for number, action in enumerate(actions):
        body = action.group(1)
        defined = _DEFINE.match(body)
        if defined:
            helpers[defined.group(1)] = text[action.end():_block_end(actions, number, len(text))]
        if _refuses(text, actions, number):
            continue  # `{{ if .Values.image.sha }}{{ fail "use digest" }}`: read only to be refused
        for chain in _CHAIN.finditer(body):
            keys = tuple(chain.group(2).split(".")[1:])
            if chain.group(1):  # `index .Values "a" "b-c"`: quoted keys follow
                keys += tuple(_QUOTED.findall(chain.group(3)))
            uses.append(_Use(keys, _scope(text, actions, number), tuple(_INCLUDED.findall(body))))
    return uses


def _refuses(text: str, actions: list[re.Match[str]], number: int) -> bool:
    """Whether an action is an `if` whose body fails the render: what it tests is forbidden, not used."""
    if not re.match(r"\s*if\b", actions[number].group(1)):
        return False
    return re.search(r"\{\{-?\s*fail\b", text[actions[number].end():_block_end(actions, number, len(text))]) is not None


def _scope(text: str, actions: list[re.Match[str]], number: int) -> str:
    """What works with a value an action takes: the body of a `with`/`range`, what follows a `:=`."""
    body = actions[number].group(1)
    if re.match(r"\s*(?:with|range)\b", body):
        return text[actions[number].end():_block_end(actions, number, len(text))]
    if ":=" in body or re.search(r"\$\w+\s*=", body):
        return text[actions[number].end():]
    return ""


def _block_end(actions: list[re.Match[str]], opener: int, default: int) -> int:
    """Where the block an action opens ends: the start of its matching `end`."""
    depth = 0
    for action in actions[opener + 1:]:
        if _OPENS.match(action.group(1)):
            depth += 1
        elif _ENDS.match(action.group(1)):
            if depth == 0:
                return action.start()
            depth -= 1
    return default


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


def _archive(data: bytes, budget: _Budget) -> tuple[str, dict[str, bytes]] | None:
    """A packaged subchart: `NAME/Chart.yaml`, `NAME/templates/...` inside a gzipped tar."""
    contents: dict[str, bytes] = {}
    top = ""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive:
                if not member.isfile():
                    continue
                top, _, relative = member.name.partition("/")
                if relative == "Chart.yaml" or relative.startswith(("templates/", "charts/")):
                    budget.take(member.size)
                    extracted = archive.extractfile(member)
                    if extracted is not None:
                        contents[relative] = extracted.read(_MAX_FILE_BYTES + 1)
    except (tarfile.TarError, OSError, EOFError):
        return None
    return (top, contents) if top else None


def _chart_name(data: bytes) -> str | None:
    meta = _yaml(data)
    name = meta.get("name")
    return name if isinstance(name, str) else None


def _aliases(data: bytes) -> dict[str, list[str]]:
    """Dependency name -> the values keys it reads: its name, or each alias it is used under."""
    dependencies = _yaml(data).get("dependencies")
    aliases: dict[str, list[str]] = {}
    for dependency in dependencies if isinstance(dependencies, list) else []:
        if isinstance(dependency, dict) and isinstance(dependency.get("name"), str):
            alias = dependency.get("alias")
            aliases.setdefault(dependency["name"], []).append(alias if isinstance(alias, str) else dependency["name"])
    return aliases


def _yaml(data: bytes) -> dict[object, object]:
    try:
        loaded = yaml.safe_load(data.decode("utf-8", "replace"))
    except (yaml.YAMLError, RecursionError):
        return {}
    return loaded if isinstance(loaded, dict) else {}
