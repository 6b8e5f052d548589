"""The text report: one compiler-style line a finding, then a count of errors and warnings."""
from __future__ import annotations

from pinguard.findings import ERROR, WARNING
from pinguard.report import text
from tests.report.written import FINDINGS, parse_text, render


def test_text_is_one_compiler_style_line_per_finding_then_a_summary() -> None:
    output = render(text.write, FINDINGS)
    assert output.endswith("\n")
    parsed, last = parse_text(output)
    assert len(parsed) == len(FINDINGS)
    for got, f in zip(parsed, FINDINGS, strict=True):
        assert got == {
            "file": f.file, "line": str(f.line), "column": str(f.column), "severity": f.severity,
            "message": " ".join(f.message.splitlines()), "rule": f.rule,
        }
    assert last == "3 errors, 2 warnings"


def test_text_summary_counts_one_in_the_singular() -> None:
    errors = [f for f in FINDINGS if f.severity == ERROR]
    warnings = [f for f in FINDINGS if f.severity == WARNING]
    assert render(text.write, errors[:1]).splitlines()[-1] == "1 error, 0 warnings"
    assert render(text.write, warnings[:1]).splitlines()[-1] == "0 errors, 1 warning"


def test_text_writes_nothing_without_findings() -> None:
    assert render(text.write, []) == ""
