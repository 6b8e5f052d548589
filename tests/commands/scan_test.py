from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pinguard.cli import main

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: a
    image: nginx:1.25
  - name: b
    image: "ghcr.io/org/app:v1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
  - name: c
    image: ${IMAGE}
"""


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(args, env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "pod.yaml").write_text(POD)
    (tmp_path / "Dockerfile").write_text("FROM python:3.11-slim AS build\nFROM build\n")
    (tmp_path / "README.md").write_text("image: not-scanned:1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_json_lists_every_reference_with_its_place(tree: Path) -> None:
    status, out, err = _run(["scan", "--format", "json"])
    assert (status, err) == (0, "")
    references = json.loads(out)["references"]
    assert [(r["file"], r["line"], r["column"], r["source"], r["value"]) for r in references] == [
        ("Dockerfile", 1, 6, "dockerfile", "python:3.11-slim"),
        ("k8s/pod.yaml", 7, 12, "kubernetes", "nginx:1.25"),
        ("k8s/pod.yaml", 9, 13, "kubernetes",
         "ghcr.io/org/app:v1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
        ("k8s/pod.yaml", 11, 12, "kubernetes", "${IMAGE}"),
    ]
    assert references[1] | {"problem": None} == {
        "file": "k8s/pod.yaml", "line": 7, "column": 12, "source": "kubernetes", "value": "nginx:1.25",
        "name": "docker.io/library/nginx", "tag": "1.25", "digest": None, "problem": None,
    }
    assert references[2]["digest"].startswith("sha256:0123")
    assert references[3]["name"] is None and "templated" in references[3]["problem"]


def test_text_format_and_a_broken_file(tree: Path) -> None:
    (tree / "k8s" / "broken.yaml").write_text("kind: Pod\nspec: [unclosed\n  image: x:1\n")
    status, out, err = _run(["scan", "k8s", "Dockerfile"])
    assert status == 2
    assert err.startswith("pinguard: k8s/broken.yaml:") and "invalid YAML" in err and "Traceback" not in err
    assert "k8s/pod.yaml:7:12: docker.io/library/nginx:1.25 (kubernetes)\n" in out  # the others still listed
    assert "Dockerfile:1:6: docker.io/library/python:3.11-slim (dockerfile)\n" in out
    assert "k8s/pod.yaml:11:12: ${IMAGE} (kubernetes): not resolvable: templated value" in out


def test_git_work_tree_is_walked_as_git_lists_it(tree: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q"], check=True)
    (tree / ".gitignore").write_text("ignored/\n")
    (tree / "ignored").mkdir()
    (tree / "ignored" / "pod.yaml").write_text(POD)
    status, out, _ = _run(["scan", "-q"])
    assert status == 0
    assert "ignored/" not in out and "k8s/pod.yaml" in out
