"""GitHub Actions workflow commands: one annotation a finding, escaped as the runner reads them."""
from __future__ import annotations

from pinguard.findings import ERROR, Finding
from pinguard.report import github
from tests.report.written import FINDINGS, parse_github, render


def test_github_commands_carry_every_property_and_the_message() -> None:
    output = render(github.write, FINDINGS)
    assert output.count("\n") == len(FINDINGS)  # line breaks in values are escaped
    parsed = parse_github(output)
    for got, f in zip(parsed, FINDINGS, strict=True):
        assert got == {
            "command": "error" if f.severity == ERROR else "warning",
            "file": f.file, "line": str(f.line), "col": str(f.column), "title": f"pinguard {f.rule}",
            "message": f.message,
        }


def test_github_escapes_as_the_toolkit_does() -> None:
    f = Finding("a%b:c,d.yaml", 1, 2, "unpinned", ERROR, "50%: a,b\r\nc")  # line breaks: escaped by the finding
    assert render(github.write, [f]) == (
        "::error file=a%25b%3Ac%2Cd.yaml,line=1,col=2,title=pinguard unpinned::50%25: a,b\\r\\nc\n"
    )
