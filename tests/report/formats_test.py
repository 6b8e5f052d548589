"""Every report format, parsed back and compared field by field with the findings written."""
from __future__ import annotations

import io
import json
import re
import string
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from pinguard import __version__
from pinguard.cli import main
from pinguard.findings import ERROR, WARNING, Finding
from pinguard.policy.rules import RULES, summary
from pinguard.report import FORMATS, github, json_format, sarif, text

SCHEMA = Path(__file__).resolve().parents[1] / "testdata" / "schemas" / "sarif-schema-2.1.0.json"  # OASIS

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


def _render(writer: Callable[[Sequence[Finding], io.StringIO], None], findings: Sequence[Finding]) -> str:
    stream = io.StringIO()
    writer(findings, stream)
    return stream.getvalue()


# text

_TEXT_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): (?P<severity>error|warning): "
                        r"(?P<message>.*) \[(?P<rule>[a-z-]+)\]$")


def _parse_text(output: str) -> tuple[list[dict[str, str]], str]:
    lines = output.splitlines()
    return [_TEXT_LINE.fullmatch(line).groupdict() for line in lines[:-1]], lines[-1]  # type: ignore[union-attr]


def test_text_is_one_compiler_style_line_per_finding_then_a_summary() -> None:
    output = _render(text.write, FINDINGS)
    assert output.endswith("\n")
    parsed, last = _parse_text(output)
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
    assert _render(text.write, errors[:1]).splitlines()[-1] == "1 error, 0 warnings"
    assert _render(text.write, warnings[:1]).splitlines()[-1] == "0 errors, 1 warning"


def test_text_writes_nothing_without_findings() -> None:
    assert _render(text.write, []) == ""


# json

def test_json_holds_every_field_and_a_summary() -> None:
    output = _render(json_format.write, FINDINGS)
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
    assert json.loads(_render(json_format.write, [])) == {
        "findings": [], "summary": {"errors": 0, "warnings": 0, "files": 0, "rules": {}},
    }


# github

_COMMAND = re.compile(r"^::(?P<command>[a-z]+) (?P<properties>[^:]*)::(?P<data>.*)$")


def _unescape_data(value: str) -> str:
    # The inverse of actions/toolkit's escapeData: `%` was escaped first, so it is restored last.
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_property(value: str) -> str:
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def _parse_github(output: str) -> list[dict[str, str]]:
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


def test_github_commands_carry_every_property_and_the_message() -> None:
    output = _render(github.write, FINDINGS)
    assert output.count("\n") == len(FINDINGS)  # line breaks in values are escaped
    parsed = _parse_github(output)
    for got, f in zip(parsed, FINDINGS, strict=True):
        assert got == {
            "command": "error" if f.severity == ERROR else "warning",
            "file": f.file, "line": str(f.line), "col": str(f.column), "title": f"pinguard {f.rule}",
            "message": f.message,
        }


def test_github_escapes_as_the_toolkit_does() -> None:
    f = Finding("a%b:c,d.yaml", 1, 2, "unpinned", ERROR, "50%: a,b\r\nc")  # line breaks: escaped by the finding
    assert _render(github.write, [f]) == (
        "::error file=a%25b%3Ac%2Cd.yaml,line=1,col=2,title=pinguard unpinned::50%25: a,b\\r\\nc\n"
    )


# sarif

@pytest.fixture(scope="module")
def validate() -> Callable[[dict[str, Any]], None]:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    validator.check_schema(schema)

    def check(log: dict[str, Any]) -> None:
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
        assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)

    return check


def _sarif(findings: Sequence[Finding]) -> dict[str, Any]:
    output = _render(sarif.write, findings)
    assert output.endswith("\n")
    log: dict[str, Any] = json.loads(output)
    return log


_URI_CHARACTERS = set(string.ascii_letters + string.digits + "-._~" + "!$&'()*+,;=" + ":@/%")


def _assert_uri_of(uri: str, file: str) -> None:
    assert set(uri) <= _URI_CHARACTERS, uri
    assert re.search(r"%(?![0-9A-F]{2})", uri) is None, uri
    assert urlsplit(uri).scheme == "" and not uri.startswith("/"), uri  # a relative reference
    assert unquote(uri) == file


def test_sarif_is_valid_and_describes_every_rule(validate: Callable[[dict[str, Any]], None]) -> None:
    log = _sarif(FINDINGS)
    validate(log)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "pinguard" and driver["version"] == __version__
    assert [rule["id"] for rule in driver["rules"]] == list(RULES)
    names = {"digest-mismatch": "DigestMismatch", "unused-lock-entry": "UnusedLockEntry", "unpinned": "Unpinned"}
    levels = {"error": "error", "warning": "warning", "off": "none"}
    for descriptor, module in zip(driver["rules"], RULES.values(), strict=True):
        if module.ID in names:
            assert descriptor["name"] == names[module.ID]
        assert re.fullmatch(r"(?:[A-Z][a-z0-9]*)+", descriptor["name"])
        assert descriptor["shortDescription"]["text"] == summary(module)
        full, help_text = descriptor["fullDescription"]["text"], descriptor["help"]["text"]
        assert full and full in help_text and summary(module) not in full
        assert help_text.startswith(f"{module.ID}: ") and "PASS:" in help_text and "FAIL:" in help_text
        assert descriptor["defaultConfiguration"]["level"] == levels[str(module.DEFAULT["level"])]
        assert descriptor["properties"]["tags"] == ["security", "supply-chain"]


def test_sarif_results_point_at_their_rule_and_place(validate: Callable[[dict[str, Any]], None]) -> None:
    log = _sarif(FINDINGS)
    validate(log)
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert run["columnKind"] == "unicodeCodePoints"
    assert len(run["results"]) == len(FINDINGS)
    for result, f in zip(run["results"], FINDINGS, strict=True):
        assert result["ruleId"] == f.rule
        assert rules[result["ruleIndex"]]["id"] == f.rule
        assert result["level"] == ("error" if f.severity == ERROR else "warning")
        assert result["message"]["text"] == f.message
        [location] = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        _assert_uri_of(artifact["uri"], f.file)
        assert location["physicalLocation"]["region"] == {"startLine": f.line, "startColumn": f.column}
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]]
    assert "sub%20dir/Dockerfile" in uris and "%C3%BCberall/Dockerfile" in uris
    assert "k8s/100%25,a%3Ab.yaml" in uris


def test_sarif_absolute_paths_are_file_uris(validate: Callable[[dict[str, Any]], None]) -> None:
    f = Finding("/srv/repo/my app/Dockerfile", 2, 6, "unpinned", ERROR, "no digest", "nginx:1.25")
    log = _sarif([f])
    validate(log)
    artifact = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "file:///srv/repo/my%20app/Dockerfile"}


def test_sarif_unknown_rule_has_no_index(validate: Callable[[dict[str, Any]], None]) -> None:
    log = _sarif([Finding("Dockerfile", 1, 1, "not-a-rule", WARNING, "m")])
    validate(log)
    result = log["runs"][0]["results"][0]
    assert result["ruleId"] == "not-a-rule" and "ruleIndex" not in result


def _fingerprints(findings: Sequence[Finding]) -> list[str]:
    return [r["partialFingerprints"]["pinguardFindingHash/v1"] for r in _sarif(findings)["runs"][0]["results"]]


def test_sarif_fingerprints_are_stable_and_tell_findings_apart() -> None:
    assert _render(sarif.write, FINDINGS) == _render(sarif.write, FINDINGS)  # deterministic, byte for byte
    first = _fingerprints(FINDINGS)
    assert first == _fingerprints(FINDINGS)
    assert len(set(first)) == len(FINDINGS)  # the two same-text findings at lines 3 and 9 included


def test_sarif_fingerprints_survive_lines_moving() -> None:
    moved = [Finding(f.file, f.line + 40, f.column + 2, f.rule, f.severity, f.message, f.reference) for f in FINDINGS]
    assert _fingerprints(sorted(moved)) == _fingerprints(FINDINGS)


@pytest.mark.parametrize("change", ["rule", "file", "reference", "message"])
def test_sarif_fingerprints_follow_what_the_finding_says(change: str) -> None:
    base = Finding("Dockerfile", 1, 6, "unpinned", ERROR, "no digest", "nginx:1.25")
    other = {
        "rule": Finding("Dockerfile", 1, 6, "not-locked", ERROR, "no digest", "nginx:1.25"),
        "file": Finding("Dockerfile.dev", 1, 6, "unpinned", ERROR, "no digest", "nginx:1.25"),
        "reference": Finding("Dockerfile", 1, 6, "unpinned", ERROR, "no digest", "nginx:1.26"),
        "message": Finding("Dockerfile", 1, 6, "unpinned", ERROR, "no digest at all", "nginx:1.25"),
    }[change]
    assert _fingerprints([base]) != _fingerprints([other])


def test_sarif_without_findings_is_a_valid_empty_run(validate: Callable[[dict[str, Any]], None]) -> None:
    log = _sarif([])
    validate(log)
    [run] = log["runs"]
    assert run["results"] == []
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == list(RULES)


# end to end

@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "sub dir").mkdir(parents=True)
    (root / "sub dir" / "Dockerfile").write_text("FROM nginx:1.25\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def test_every_format_is_offered_by_check() -> None:
    assert set(FORMATS) == {"text", "json", "sarif", "github"}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_check_writes_each_format_to_the_output_file(
    fmt: str, repo: Path, tmp_path: Path, request: pytest.FixtureRequest,
) -> None:
    target = tmp_path / f"report.{fmt}"
    out, err = io.StringIO(), io.StringIO()
    status = main(["check", "--format", fmt, "--output", str(target), "."], env={}, stdout=out, stderr=err)
    assert status == 1, err.getvalue()
    assert out.getvalue() == ""
    written = target.read_text(encoding="utf-8")
    if fmt == "text":
        parsed, last = _parse_text(written)
        assert {(p["file"], p["line"], p["column"], p["rule"]) for p in parsed} >= {
            ("sub dir/Dockerfile", "1", "6", "unpinned")}
        assert re.fullmatch(r"\d+ errors?, \d+ warnings?", last)
    elif fmt == "json":
        document = json.loads(written)
        assert any(f["rule"] == "unpinned" and f["file"] == "sub dir/Dockerfile" and f["reference"] == "nginx:1.25"
                   for f in document["findings"])
        assert document["summary"]["errors"] >= 1
    elif fmt == "github":
        assert any(c["command"] == "error" and c["file"] == "sub dir/Dockerfile" and c["title"] == "pinguard unpinned"
                   for c in _parse_github(written))
    else:
        log = json.loads(written)
        request.getfixturevalue("validate")(log)  # only this format needs the schema
        results = log["runs"][0]["results"]
        assert any(r["ruleId"] == "unpinned" and r["locations"][0]["physicalLocation"]["artifactLocation"]
                   == {"uri": "sub%20dir/Dockerfile", "uriBaseId": "%SRCROOT%"} for r in results)
