"""Templates: text that renders to YAML but is none, read line by line for `image:` keys.

Templates are never passed over in silence. A file named as a template
(`_helpers.tpl`, `*.yaml.tmpl`, `*.yaml.gotmpl`, `*.yml.j2`, ...) is of kind
`template`: its text is not YAML, so it is read line by line for `image:` and
`image_uri:` keys, and neither its name nor its text says reliably what it
renders to. A YAML file that turns out to be a template (a Helm chart's
`templates/`) is read the same way under its own kind. Templated values are
reported as not resolvable; literal ones are pinned in place.
"""
from __future__ import annotations

import bisect
import re

from yaml.nodes import MappingNode, Node

from pinguard.errors import InvalidReference
from pinguard.reference import parse
from pinguard.sources import kinds, kubernetes, workflow
from pinguard.sources.base import DEFAULT_SETTINGS, Found, Searched, SourceSettings
from pinguard.sources.yamlnodes import Located, is_templated, walk_pairs

SOURCE = kinds.TEMPLATE

_IMAGE_KEYS = ("image", "image_uri")
_TEMPLATE_LINE = re.compile(
    rf"""^[ \t]*(?:-[ \t]+)?                                   # indentation, maybe a list item
        (?P<q>["']?)(?:{"|".join(_IMAGE_KEYS)})(?P=q)[ \t]*:   # the key, quoted as JSON writes it or not
        [ \t]*(?P<rest>[^\r\n]*)                              # the value, maybe quoted, maybe a comment""",
    re.MULTILINE | re.VERBOSE,
)
# Template actions: the quotes and `#` inside one are the template's, not YAML's.
_ACTION_OPENERS = ("{{", "{%", "{#", "${")
_ACTION = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}|\$\{[^}]*\}")
# Go template and Jinja comments open so: what they hold is never rendered.
_COMMENT_START = re.compile(r"\{\{(?:- )?/\*|\{#")
_NULL_WORDS = frozenset(("~", "null", "Null", "NULL"))  # a plain `image: null` names no image
# Read a line at a time as the YAML it renders to: a `#` after a blank opens a comment, unless a quoted value
# (one that starts a value, not a `'` inside a word) or a template action holds it; an action left open runs to
# the end of its line.
_LINE_COMMENT = re.compile(r"""(?<![^\s\[{,:])(?:"(?:[^"\\\r\n]|\\.)*"|'(?:[^'\r\n]|'')*')"""
                           r"|\{\{(?:.*?\}\}|.*)|\{%(?:.*?%\}|.*)|\$\{[^}\r\n]*\}?|(?<![^ \t\r\n])#[^\r\n]*")


def find(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS) -> Searched:
    """A file named as a template; `settings` tell templates nothing."""
    return Searched(lines(path, text, SOURCE))


def looks_templated(text: str, kind: str) -> bool:
    """Whether a file of `kind` that is no valid YAML may be a template, to be read line by line."""
    if kind == workflow.SOURCE:  # `${{ }}` and `${VAR}` are GitHub's and the shell's, inside YAML values
        return "{{" in text.replace("${{", "") or "{%" in text
    return "{{" in text or "{%" in text or "${" in text


def templated_mappings(documents: list[Node], where: Located) -> list[Found]:
    """`image: {{ .Values.image }}` is valid YAML, a mapping in a mapping, and a template all the same.

    Policy documents and CRDs, which the kinds skip, hold no images to report.
    """
    found: list[Found] = []
    for document in documents:
        if kubernetes.skipped(document):
            continue
        for _, key, value in walk_pairs(document):
            start = value.start_mark.index
            if key.value in _IMAGE_KEYS and isinstance(value, MappingNode) and where.text.startswith("{{", start):
                found.append(_templated(where, start, value.end_mark.index))
    return found


def lines(path: str, text: str, kind: str) -> list[Found]:
    """The values of `image:` and `image_uri:` lines in a template, except those inside template comments."""
    where = Located(text, path, kind)
    comments = _comments(text)
    comment_starts = [start for start, _ in comments]
    found: list[Found] = []
    for line in _TEMPLATE_LINE.finditer(text):
        before = bisect.bisect_right(comment_starts, line.start()) - 1
        if before >= 0 and line.start() < comments[before][1]:
            continue
        first, last = _value_bounds(line.group("rest"))
        item = _line_value(where, line.start("rest") + first, line.start("rest") + last, quoted=first > 0)
        if item is not None:
            found.append(item)
    return found


def comments(text: str) -> list[tuple[int, int]]:
    """Where a template's comments are, as [start, end) in order: its template comments (`{{/* */}}`, `{# #}`),
    which the engine drops before anything reads YAML, then the YAML comments of the lines between them."""
    spans: list[tuple[int, int]] = []
    done = 0
    for start, end in [*_comments(text), (len(text), len(text))]:
        spans.extend(match.span() for match in _LINE_COMMENT.finditer(text, done, start)
                     if match.group().startswith("#"))
        spans.append((start, end))
        done = end
    spans.pop()  # the end of the text
    return spans


def _templated(where: Located, start: int, end: int) -> Found:
    value = where.text[start:end]
    return Found(where.path, where.source, where.span(start, end), value, None,
                 f"templated value {value!r} cannot be resolved")


def _comments(text: str) -> list[tuple[int, int]]:
    """Where Go template (`{{/* */}}`) and Jinja (`{# #}`) comments sit; one left open runs to the end."""
    spans: list[tuple[int, int]] = []
    position = 0
    while (opened := _COMMENT_START.search(text, position)) is not None:
        closer = "#}" if opened.group() == "{#" else "*/"
        close = text.find(closer, opened.end())
        position = len(text) if close < 0 else close + len(closer)
        spans.append((opened.start(), position))
    return spans


def _value_bounds(rest: str) -> tuple[int, int]:
    """Where the value is in what follows `key:` on its line: inside its quotes, else before a comment.

    Template actions are skipped whole: `{{ index .Values "image" }}` holds quotes that are not YAML's.
    """
    quote = rest[:1] if rest[:1] in ("'", '"') else ""
    position = len(quote)
    while position < len(rest):
        if rest.startswith(_ACTION_OPENERS, position):
            action = _ACTION.match(rest, position)
            if action and not quote and position and _COMMENT_START.match(action.group()):
                break  # `nginx:1.25 {{/* why */}}`: a template comment ends the value as `#` does
            position = action.end() if action else len(rest)  # an action left open runs past the line
        elif rest[position] == quote:
            return 1, position
        elif not quote and rest[position] == "#" and (position == 0 or rest[position - 1] in " \t"):
            break
        else:
            position += 1
    return len(quote), len(rest[:position].rstrip())


def _line_value(where: Located, start: int, end: int, *, quoted: bool) -> Found | None:
    value = where.text[start:end]
    if not value or (not quoted and value in _NULL_WORDS):
        return None
    if is_templated(value):
        return _templated(where, start, end)
    span = where.span(start, end)
    try:
        return Found(where.path, where.source, span, value, parse(value))
    except InvalidReference as exc:
        return Found(where.path, where.source, span, value, None, str(exc))
