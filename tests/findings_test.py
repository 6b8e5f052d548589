"""Findings: sorted by place, and what they quote from a file cut and escaped once, for every rule and format."""
from __future__ import annotations

from pinguard.findings import ERROR, WARNING, Finding


def test_findings_sort_by_file_then_place_then_rule() -> None:
    findings = [Finding("b.yaml", 1, 1, "unpinned", ERROR, "m"), Finding("a.yaml", 9, 1, "unpinned", ERROR, "m"),
                Finding("a.yaml", 2, 7, "unpinned", ERROR, "m"), Finding("a.yaml", 2, 3, "templated", WARNING, "m"),
                Finding("a.yaml", 2, 3, "not-locked", ERROR, "m")]
    assert [(f.file, f.line, f.column, f.rule) for f in sorted(findings)] == [
        ("a.yaml", 2, 3, "not-locked"), ("a.yaml", 2, 3, "templated"), ("a.yaml", 2, 7, "unpinned"),
        ("a.yaml", 9, 1, "unpinned"), ("b.yaml", 1, 1, "unpinned")]


def test_what_does_not_print_is_escaped_so_no_value_rewrites_the_terminal() -> None:
    finding = Finding("pod\n.yaml", 1, 1, "unpinned", ERROR, "`\x1b]0;owned\x07` has no digest", "\x1b[31mx")
    assert finding.file == "pod\\n.yaml"
    assert finding.message == "`\\x1b]0;owned\\x07` has no digest" and finding.reference == "\\x1b[31mx"


def test_a_long_value_is_cut_with_an_ellipsis() -> None:
    finding = Finding("pod.yaml", 1, 1, "unpinned", ERROR, "m", "x" * 600)
    assert finding.reference == "x" * 512 + "…"


def test_json_holds_every_field() -> None:
    finding = Finding("pod.yaml", 3, 12, "unpinned", ERROR, "`nginx:1.25` has no digest", "nginx:1.25")
    assert finding.to_json() == {"rule": "unpinned", "severity": "error", "file": "pod.yaml", "line": 3, "column": 12,
                                 "message": "`nginx:1.25` has no digest", "reference": "nginx:1.25"}
