"""What `check` reports: findings, sorted by place so output is deterministic."""
from __future__ import annotations

import re
from dataclasses import dataclass

ERROR = "error"
WARNING = "warning"

_SHOWN = 512  # characters of one word a finding shows: the longest image reference fits
_MESSAGE = 4096  # characters of a whole message
_LONG_WORD = re.compile(rf"\S{{{_SHOWN + 1},}}")


def shown(text: str, limit: int = _MESSAGE) -> str:
    """`text` as a finding may show it: words cut to `_SHOWN` characters, all of it to `limit`, with an
    ellipsis where cut; characters that do not print (controls, terminal escapes, line breaks) escaped.

    Values come from the files checked: a megabyte image string, or one that would rewrite the terminal.
    """
    text = _LONG_WORD.sub(lambda word: word.group()[:_SHOWN] + "…", text)
    return escaped(text[:limit] + "…" if len(text) > limit else text)


def escaped(text: str) -> str:
    """`text` with every character that does not print written as its Python escape (`\\x1b`, `\\n`)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


@dataclass(frozen=True, order=True)
class Finding:
    """One problem at one place. Fields are in sort order: file, then position, then rule.

    What it says is `shown`: a value quoted from a file is cut and escaped here, once for every rule and format.
    """

    file: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    rule: str
    severity: str  # ERROR or WARNING
    message: str  # what is wrong and how to fix it
    reference: str | None = None  # the image reference as written, when there is one

    def __post_init__(self) -> None:
        object.__setattr__(self, "file", escaped(self.file))
        object.__setattr__(self, "message", shown(self.message))
        if self.reference is not None:
            object.__setattr__(self, "reference", shown(self.reference, _SHOWN))

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule, "severity": self.severity, "file": self.file, "line": self.line,
            "column": self.column, "message": self.message, "reference": self.reference,
        }


@dataclass(frozen=True)
class Problem:
    """What a rule yields; the policy stamps rule and severity on it to make a Finding."""

    file: str
    line: int
    column: int
    message: str
    reference: str | None = None
