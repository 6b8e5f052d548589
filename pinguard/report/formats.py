"""The output formats by name: `pinguard check --format` picks a writer here."""
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
