"""Output formats for findings: each a function writing findings to a stream it is handed.

Checking never prints; `pinguard check` picks a writer by name.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from pinguard.findings import Finding
from pinguard.report import github, json_format, sarif, text

Writer = Callable[[Sequence[Finding], TextIO], None]

FORMATS: dict[str, Writer] = {
    "text": text.write,
    "json": json_format.write,
    "sarif": sarif.write,
    "github": github.write,
}
