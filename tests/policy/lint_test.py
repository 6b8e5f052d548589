"""The rules that read whole documents, run as each source composes them: every file parsed once."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pinguard.policy.lint import lint
from pinguard.policy.load import load, preset

TWICE = "kind: Pod\nmetadata: {name: a, name: b}\nspec:\n  containers:\n  - image: nginx:1.25\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rules(paths: list[str]) -> list[tuple[str, int, str]]:
    result = lint(paths, load([preset("default")]), Path("pinguard.lock"))
    assert result.errors == []
    return [(f.file, f.line, f.rule) for f in result.findings if f.rule == "duplicate-key"]


def test_each_document_is_checked_and_the_file_parsed_once(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (folder / "pods.yaml").write_text(f"---\n{TWICE}---\nkind: Pod\nspec: {{}}\n---\n{TWICE}")
    (folder / "config.yaml").write_text("kind: ConfigMap\ndata: {a: 1, a: 2}\n")  # no `image`: nothing parses it
    parses: list[object] = []
    compose_all = yaml.compose_all
    monkeypatch.setattr(yaml, "compose_all", lambda *args, **kw: parses.append(args) or compose_all(*args, **kw))
    assert _rules(["pods.yaml", "config.yaml"]) == [("pods.yaml", 3, "duplicate-key"),
                                                    ("pods.yaml", 12, "duplicate-key")]
    assert len(parses) == 1  # the manifest once, its source's parse gone on to the rules; the config not at all


def test_a_file_read_as_a_template_after_its_first_document_has_no_document_findings(folder: Path) -> None:
    (folder / "pod.yaml").write_text(f"{TWICE}---\n{{{{- if .Values.on }}}}\nimage: x\n{{{{- end }}}}\n")
    (folder / "after.yaml").write_text("kind: Pod\nspec: {}\n")
    assert _rules(["pod.yaml", "after.yaml"]) == []  # as before documents were handed on: a template has none
