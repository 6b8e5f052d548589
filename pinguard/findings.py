"""What `check` reports: findings, sorted by place so output is deterministic."""
from __future__ import annotations

from dataclasses import dataclass

from pinguard.untrusted_text import WORD, escaped, shown

ERROR = "error"
WARNING = "warning"

@dataclass(frozen=True, order=True, slots=True)  # slots: a large file may yield one for each reference
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
            object.__setattr__(self, "reference", shown(self.reference, WORD))

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
