"""Findings to write in every report format, and the text and GitHub formats parsed back."""
from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence

from pinguard.findings import ERROR, WARNING, Finding

FINDINGS = sorted([
    Finding("sub dir/Dockerfile", 1, 6, "unpinned", ERROR,
            "`nginx:1.25` has no digest: run `pinguard pin`", "nginx:1.25"),
    Finding("k8s/100%,a:b.yaml", 3, 12, "denied-tags", ERROR,
            "`python:latest` uses `latest`: 100% moving, always,\nsecond line", "python:latest"),
    Finding("k8s/100%,a:b.yaml", 9, 12, "denied-tags", ERROR,
            "`python:latest` uses `latest`: 100% moving, always,\nsecond line", "python:latest"),
    Finding("überall/Dockerfile", 7, 3, "templated", WARNING, "cannot be checked: ${IMAGE} → später", None),
    Finding("pinguard.lock", 10, 1, "unused-lock-entry", WARNING, "entry `a:1` is unused\r\nremove it", None),
])


def render(writer: Callable[[Sequence[Finding], io.StringIO], None], findings: Sequence[Finding]) -> str:
    stream = io.StringIO()
    writer(findings, stream)
    return stream.getvalue()


_TEXT_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): (?P<severity>error|warning): "
                        r"(?P<message>.*) \[(?P<rule>[a-z-]+)\]$")


def parse_text(output: str) -> tuple[list[dict[str, str]], str]:
    lines = output.splitlines()
    return [_TEXT_LINE.fullmatch(line).groupdict() for line in lines[:-1]], lines[-1]  # type: ignore[union-attr]


_COMMAND = re.compile(r"^::(?P<command>[a-z]+) (?P<properties>[^:]*)::(?P<data>.*)$")


def _unescape_data(value: str) -> str:
    # The inverse of actions/toolkit's escapeData: `%` was escaped first, so it is restored last.
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_property(value: str) -> str:
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def parse_github(output: str) -> list[dict[str, str]]:
    commands = []
    for line in output.splitlines():
        match = _COMMAND.fullmatch(line)
        assert match is not None, line
        command = {"command": match["command"], "message": _unescape_data(match["data"])}
        for pair in match["properties"].split(","):
            key, _, value = pair.partition("=")
            command[key] = _unescape_property(value)
        commands.append(command)
    return commands
