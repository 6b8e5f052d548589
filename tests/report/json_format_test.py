"""The JSON report: every field of every finding, and a summary."""
from __future__ import annotations

import json

from pinguard.report import json_format
from tests.report.written import FINDINGS, render


def test_json_holds_every_field_and_a_summary() -> None:
    output = render(json_format.write, FINDINGS)
    assert "ü" in output and "→" in output  # not \u-escaped
    document = json.loads(output)
    assert set(document) == {"findings", "summary"}
    assert len(document["findings"]) == len(FINDINGS)
    for got, f in zip(document["findings"], FINDINGS, strict=True):
        assert got == {
            "rule": f.rule, "severity": f.severity, "file": f.file, "line": f.line, "column": f.column,
            "message": f.message, "reference": f.reference,
        }
    assert document["summary"] == {
        "errors": 3, "warnings": 2, "files": 4,
        "rules": {"denied-tags": 2, "templated": 1, "unpinned": 1, "unused-lock-entry": 1},
    }


def test_json_without_findings() -> None:
    assert json.loads(render(json_format.write, [])) == {
        "findings": [], "summary": {"errors": 0, "warnings": 0, "files": 0, "rules": {}},
    }
