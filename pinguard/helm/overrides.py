"""Where an image's digest goes when the line that sets it is no file of this repository.

A chart the policy names by repository (fetch.py) lives in the cache: its `values.yaml`
(the defaults, which usually set the images) is read to trace images, and never
written. Its images are pinned by an override in the values file of this repository
that deploys it: the leaf's path in the values (`image.tag`, `redis.image.digest`), set
in the file where the finding points (judge.py: the last values file of a deployment
that renders the image, which nothing after it overrides). The path is merged into the
blocks the file already has: the missing keys inserted as new lines at the top of the
deepest block it holds (on the line after the block's key, at its indentation), or
appended at the end of the file; a key it already holds with an empty or plain value
is filled in. A
flow mapping (`image: {}`), a list on the path (`[0]`), an alias, a `<<` merge, or a
value that is no block where the path needs one gets no edit: the image is reported.

The candidates are those of placements.py, spelled as overrides: the block's `digest`
(or `sha`, whole or bare hex) where the chart's values declare one, the tag form
(`tag: "1.2.3@sha256:…"`), a new `digest`, the tag it renders with the digest in a
new `tag`/`version`. Each is only a candidate: `pinning.py` keeps the one a render
confirms.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode

from pinguard.helm.judge import JudgedChart
from pinguard.helm.placements import Placement
from pinguard.helm.trace import DIGEST_KEYS, Parts, Trace
from pinguard.sources.base import Found, SourceError
from pinguard.sources.yamlnodes import compose, line_break, mapping_get, value_span
from pinguard.write.edits import Edit

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# Keys YAML 1.1 (Helm's reading) takes for a boolean or a null when written plain.
_NOT_PLAIN = frozenset(("y", "n", "yes", "no", "on", "off", "true", "false", "null"))
_MERGE = "<<"
_STEP = 2  # spaces a new level is indented by, below a block with no nested block to copy


def overrides(chart: JudgedChart, found: Found, trace: Trace, image: str, digest: str) -> list[Placement] | None:
    """The placements of `image`'s digest as overrides in `found`'s file; None where the line that controls it is a
    file of this repository (placements.py writes there) or the chart is one of this repository."""
    leaf = trace.whole or trace.tag or trace.name
    root = chart.root.resolve()
    if leaf is None or not any(d.remote for d in chart.deployments) or not leaf.path.resolve().is_relative_to(root):
        return None
    home = Path(found.path).resolve()
    text = chart.texts.get(home)
    if text is None:
        return []
    placed = []
    for name, path, value in _candidates(trace, image, digest):
        edit = override_edit(text, path, value)
        placed.append(Placement(name, () if edit is None else ((home, edit),)))
    return placed


def _candidates(trace: Trace, image: str, digest: str) -> list[tuple[str, tuple[str, ...], str]]:
    """(what to call it, the path in the values, the string to set there), best first, as placements.py orders
    them."""
    if trace.whole is not None:
        whole = trace.whole
        pinned = f"{whole.printed.partition('@')[0]}@{digest}"
        return [("an override of the image value", (*whole.at, whole.key), pinned)]
    anchor = trace.tag or trace.name
    assert trace.block is not None and anchor is not None
    at = anchor.at
    declared = next((key for key in DIGEST_KEYS if mapping_get(trace.block, key) is not None), None)
    fields = [(f"an override of `{key}`{' as bare hex' if bare else ''}", (*at, key),
               digest.partition(":")[2] if bare else digest)
              for key in [declared or "digest"] for bare in ((False, True) if key == "sha" else (False,))]
    tag_form = [("an override of the tag", (*at, trace.tag.key), f"{trace.tag.printed.partition('@')[0]}@{digest}")
                ] if trace.tag is not None else []
    tag = Parts.of(image).tag
    filled = [(f"an override of `{key}`, with the tag it renders", (*at, key), f"{tag}@{digest}")
              for key in ("tag", "version") if trace.tag is None and trace.name is not None and tag]
    return [*fields, *tag_form, *filled] if declared else [*tag_form, *fields, *filled]


def override_edit(text: str, path: tuple[str, ...], value: str) -> Edit | None:
    """The edit of a values file's `text` that sets `path` (keys from the top of the values) to the string
    `value`, merged into the blocks the file has; None where no edit of that kind can (see the module's
    docstring)."""
    if not path or any(key.startswith("[") for key in path):
        return None
    try:
        documents = compose(text)
    except SourceError:
        return None
    if len(documents) > 1:
        return None
    newline = line_break(text)
    if not documents:  # empty, or comments alone: the whole path appended
        start = "" if not text or text.endswith(newline) else newline
        return Edit(len(text), len(text), start + _lines(path, value, 0, _STEP, newline))
    node: Node = documents[0]
    outer = -_STEP  # the indentation of the block above `node`
    above: Node | None = None  # the key `node` is the value of; None at the top
    for depth, key in enumerate(path):
        if not isinstance(node, MappingNode) or node.flow_style or not node.value or any(
                isinstance(k, ScalarNode) and k.value == _MERGE for k, _ in node.value):
            return None
        indent = node.value[0][0].start_mark.column
        pair = next((pair for pair in reversed(node.value) if isinstance(pair[0], ScalarNode)
                     and pair[0].value == key), None)
        if pair is None:
            lines = _lines(path[depth:], value, indent, max(indent - outer, 1), newline)
            return _appended(text, node, lines, newline) if above is None else _first(text, above, node, lines, newline)
        if pair[1].start_mark.index < pair[0].end_mark.index:  # an alias: the value is written elsewhere
            return None
        if depth == len(path) - 1:
            return _replaced(text, pair[1], value)
        above, node, outer = pair[0], pair[1], indent
    return None


def _replaced(text: str, node: Node, value: str) -> Edit | None:
    """`node`, a value the file already sets at the path (empty, a null, or a plain or quoted scalar), replaced."""
    if not isinstance(node, ScalarNode) or node.style not in (None, "", "'", '"'):
        return None
    start, end = value_span(node)
    if text[start:end] != node.value:
        return None
    if node.style:
        start, end = start - 1, end + 1  # the quotes too
    return Edit(start, end, (" " if start == end and text[start - 1:start] == ":" else "") + json.dumps(value))


def _first(text: str, key: Node, block: MappingNode, lines: str, newline: str) -> Edit | None:
    """`lines` as the first entries of a nested `block`, on the line after its `key`: a comment above its first
    entry stays with it, and an edit of the block above never lands in the same place."""
    line_end = text.find(newline, key.end_mark.index)
    first = block.value[0][0].start_mark
    if line_end < 0 or line_end >= first.index or text[first.index - first.column:first.index].strip():
        return None  # the block starts on its key's line, or after something else on its own
    return Edit(line_end + len(newline), line_end + len(newline), lines)


def _appended(text: str, block: MappingNode, lines: str, newline: str) -> Edit:
    """`lines` after the last entry of the top `block`."""
    end = block.value[-1][1].end_mark.index
    line_start = text.rfind(newline, 0, end) + len(newline) if text.rfind(newline, 0, end) >= 0 else 0
    if not text[line_start:end].strip():  # the entry ends where the next line starts (a block, a block scalar)
        return Edit(line_start, line_start, lines)
    line_end = text.find(newline, end)
    if line_end < 0:  # the last line of a file without a final line break
        return Edit(len(text), len(text), newline + lines)
    return Edit(line_end + len(newline), line_end + len(newline), lines)


def _lines(path: tuple[str, ...], value: str, indent: int, step: int, newline: str) -> str:
    """`a:`, `  b:`, `    c: "value"`: the path nested, one key a line, from `indent`."""
    last = len(path) - 1
    return "".join(f"{' ' * (indent + step * depth)}{_key(key)}:{' ' + json.dumps(value) if depth == last else ''}"
                   f"{newline}" for depth, key in enumerate(path))


def _key(key: str) -> str:
    """A mapping key as YAML reads it back as this string: plain where nothing else reads it, else quoted."""
    return key if _PLAIN_KEY.fullmatch(key) and key.lower() not in _NOT_PLAIN else json.dumps(key)
