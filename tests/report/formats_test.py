"""Every report format offered by `check`, written where `--output` says and parsed back."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.report.formats import FORMATS
from tests.report.written import parse_github, parse_text


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
        parsed, last = parse_text(written)
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
                   for c in parse_github(written))
    else:
        log = json.loads(written)
        request.getfixturevalue("validate")(log)  # only this format needs the schema
        results = log["runs"][0]["results"]
        assert any(r["ruleId"] == "unpinned" and r["locations"][0]["physicalLocation"]["artifactLocation"]
                   == {"uri": "sub%20dir/Dockerfile", "uriBaseId": "%SRCROOT%"} for r in results)
