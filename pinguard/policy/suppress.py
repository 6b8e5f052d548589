"""Suppressions: `# pinguard: ignore[RULE,...] reason`, read once a file, and only from its comments.

A marker counts only where the file's own syntax makes it a comment: YAML's `#` outside
every scalar (the scanner's tokens say where), a Dockerfile's comment lines (never a heredoc
body), a template's `{{/* */}}`, `{# #}` and the `#` of its lines, TOML's `#` in the
lockfile. JSON has no comments: nothing in a `.json` file suppresses. A marker in a comment
suppresses its rules on that line, and on the next when the comment is alone on its line.

A file's markers are found in one pass and its comments read only when it has one, so
checking costs the same however many findings share a line.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from pathlib import PurePosixPath

from pinguard.findings import Finding
from pinguard.lock import lockfile
from pinguard.sources import kinds, yamlnodes
from pinguard.sources.base import SourceError

_MARKER = re.compile(r"pinguard:[ \t]*ignore\[([a-z0-9\-, ]+)\]")
_WRITTEN = re.compile(r"[^\s\ufeff]")  # neither a blank nor a byte order mark

Comments = Callable[[str], list[tuple[int, int]]]  # a text's comments, as [start, end) in order, none overlapping


class Suppressions:
    """The rules suppressed on each line of one file."""

    def __init__(self, text: str, comments: Comments) -> None:
        self.rules: dict[int, set[str]] = {}
        markers = list(_MARKER.finditer(text))
        if markers:
            self._read(text, markers, comments(text))

    def covers(self, finding: Finding) -> bool:
        return finding.rule in self.rules.get(finding.line, ())

    def _read(self, text: str, markers: list[re.Match[str]], spans: list[tuple[int, int]]) -> None:
        """Each marker in a comment, its line counted on from the marker before: one pass over the text.

        A comment alone on its lines suppresses the line after its end too: a template comment may span lines.
        """
        starts = [start for start, _ in spans]
        brk = yamlnodes.line_break(text)[-1]
        line, line_start, done = 1, 0, 0
        first: int | None = None  # where the line's first character other than a blank is, once asked
        below: dict[int, int] = {}  # the line after each comment a marker is in, by the comment's index
        for marker in markers:
            at = marker.start()
            if breaks := text.count(brk, done, at):
                line, line_start, first = line + breaks, text.rfind(brk, done, at) + 1, None
            done = at
            index = bisect.bisect_right(starts, at) - 1
            if index < 0 or marker.end() > spans[index][1]:
                continue  # in no comment: a value, a key, a string
            if first is None:
                written = _WRITTEN.search(text, line_start, at)
                first = written.start() if written else at
            comment, end = spans[index]
            numbers = [line]
            if comment < line_start or first >= comment:  # alone on its line
                if index not in below:  # counted once, however many markers the comment holds
                    below[index] = line + text.count(brk, at, end) + 1
                numbers.append(below[index])
            for number in numbers:
                self.rules.setdefault(number, set()).update(rule.strip() for rule in marker[1].split(","))


def of_file(text: str, kind: str, path: str) -> Suppressions:
    """The suppressions of a scanned file of `kind`."""
    json = PurePosixPath(path).suffix.lower() == ".json"
    return Suppressions(text, _no_comments if json else _COMMENTS.get(kind, _yaml_comments))


def of_lockfile(text: str) -> Suppressions:
    return Suppressions(text, lockfile.comments)


def _no_comments(text: str) -> list[tuple[int, int]]:
    return []


# Each source's module is imported only when a file of its kind holds a marker.
def _dockerfile_comments(text: str) -> list[tuple[int, int]]:
    from pinguard.sources import dockerfile

    return dockerfile.comments(text)


def _template_comments(text: str) -> list[tuple[int, int]]:
    from pinguard.sources import templates

    return templates.comments(text)


def _yaml_comments(text: str) -> list[tuple[int, int]]:
    try:
        return yamlnodes.comments(text)
    except SourceError:  # a YAML file that is a template (a chart's `templates/`), read line by line
        return _template_comments(text)


_COMMENTS: dict[str, Comments] = {kinds.DOCKERFILE: _dockerfile_comments, kinds.TEMPLATE: _template_comments}
