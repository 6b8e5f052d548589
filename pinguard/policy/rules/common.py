"""What rules share: the context they check against, and small helpers."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pinguard.findings import Problem
from pinguard.lockfile import Lock
from pinguard.resolve import TagRules
from pinguard.sources.base import Found

Conf = Mapping[str, Any]


@dataclass(frozen=True)
class Context:
    lock: Lock
    lockfile: str  # as the user named it, for messages
    tag_rules: TagRules = field(default_factory=TagRules)


def at(found: Found, message: str) -> Problem:
    return Problem(found.path, found.line, found.column, message, found.value)


def spelled(found: Found) -> str:
    """The reference as the user reads it: the value written, in backquotes."""
    return f"`{found.value}`"
