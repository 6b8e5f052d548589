"""A reference pinguard cannot edit in place (escapes, a folded block) is judged by what it decodes to."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for, locked_test_digest

PLAIN = "kind: Pod\nspec:\n  containers:\n  - name: a\n    image: nginx:1.25\n"


def _check(tree: Path, text: str) -> tuple[int, str]:
    (tree / "pod.yaml").write_text(text)
    out, err = io.StringIO(), io.StringIO()
    status = main(["check", "pod.yaml"], env={}, stdout=out, stderr=err)
    return status, out.getvalue() + err.getvalue()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(PLAIN)
    lockfile.write(tmp_path / "pinguard.lock", lock_for(scan_paths(["pod.yaml"]).found))
    return tmp_path


@pytest.mark.parametrize("written", [
    r'"\x65vil.example/tools:latest"',
    r'"\u0065vil.example/tools:latest"',
    '"evil.example/\\\n      tools:latest"',  # a line continuation inside double quotes
])
def test_an_escaped_unlocked_image_is_an_error_not_a_warning(tree: Path, written: str) -> None:
    status, output = _check(tree, PLAIN.replace("nginx:1.25", written))
    assert status == 1, output
    assert "[escaped-reference]" in output and "evil.example/tools:latest" in output


def test_an_escaped_image_pinned_to_the_locked_digest_passes(tree: Path) -> None:
    digest = locked_test_digest("docker.io/library/nginx", "1.25")
    status, output = _check(tree, PLAIN.replace("nginx:1.25", f'"\\x6Eginx:1.25@{digest}"'))
    assert status == 0, output
    assert "escaped-reference" not in output


def test_an_escaped_image_pinned_to_another_digest_is_an_error(tree: Path) -> None:
    other = "sha256:" + "0" * 64
    status, output = _check(tree, PLAIN.replace("nginx:1.25", f'"\\x6Eginx:1.25@{other}"'))
    assert status == 1 and "[escaped-reference]" in output


def test_an_escaped_value_that_is_no_reference_stays_a_templated_warning(tree: Path) -> None:
    status, output = _check(tree, PLAIN.replace("nginx:1.25", r'"\x24{IMAGE}"'))
    assert status == 0 and "[templated]" in output and "[escaped-reference]" not in output
