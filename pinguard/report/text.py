"""Compiler style, one finding a line: `file:line:col: severity: message [rule]`."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from pinguard.findings import Finding


def write(findings: Sequence[Finding], stream: TextIO) -> None:
    for f in findings:
        message = " ".join(f.message.splitlines())  # one finding, one line: what editors and grep expect
        stream.write(f"{f.file}:{f.line}:{f.column}: {f.severity}: {message} [{f.rule}]\n")
    if findings:
        errors = sum(f.severity == "error" for f in findings)
        stream.write(f"{errors} error{'s' if errors != 1 else ''}, {len(findings) - errors} "
                     f"warning{'s' if len(findings) - errors != 1 else ''}\n")
