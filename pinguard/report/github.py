"""GitHub Actions workflow commands: each finding an annotation on its file and line."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from pinguard.findings import ERROR, Finding


def write(findings: Sequence[Finding], stream: TextIO) -> None:
    for f in findings:
        command = "error" if f.severity == ERROR else "warning"
        properties = f"file={_property(f.file)},line={f.line},col={f.column},title={_property('pinguard ' + f.rule)}"
        stream.write(f"::{command} {properties}::{_data(f.message)}\n")


def _data(text: str) -> str:
    # The escaping the runner expects in a command's message (actions/toolkit, command.ts).
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
