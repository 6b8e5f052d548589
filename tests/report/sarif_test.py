"""SARIF 2.1.0, valid against the OASIS schema: every rule described, one result a finding, stable fingerprints."""
from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from pinguard import __version__
from pinguard.findings import ERROR, WARNING, Finding
from pinguard.policy.catalog import RULES, summary
from pinguard.report import sarif
from tests.report.written import FINDINGS, render


def _sarif(findings: Sequence[Finding]) -> dict[str, Any]:
    output = render(sarif.write, findings)
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
    assert render(sarif.write, FINDINGS) == render(sarif.write, FINDINGS)  # deterministic, byte for byte
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
