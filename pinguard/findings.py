"""What `check` reports: findings, sorted by place so output is deterministic."""
from __future__ import annotations

from dataclasses import dataclass

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, order=True)
class Finding:
    """One problem at one place. Fields are in sort order: file, then position, then rule."""

    file: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    rule: str
    severity: str  # ERROR or WARNING
    message: str  # what is wrong and how to fix it
    reference: str | None = None  # the image reference as written, when there is one

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
