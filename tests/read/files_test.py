"""Which files are read (git's view inside a work tree), and reading them without losing a byte."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pinguard.read.files import TextFile, UnreadableFile, walk


def _tree(root: Path) -> None:
    for name in ("a.yaml", "sub/b.yaml", ".hidden/c.yaml", "build/d.yaml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("kind: Pod\n")


def test_outside_git_every_file_but_hidden_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert [p.as_posix() for p in walk([], tmp_path)] == ["a.yaml", "build/d.yaml", "sub/b.yaml"]


def test_inside_git_as_git_ls_files_lists_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    monkeypatch.chdir(tmp_path)
    walked = [p.as_posix() for p in walk(["."], tmp_path)]
    assert walked == [".gitignore", ".hidden/c.yaml", "a.yaml", "sub/b.yaml"]  # ignored left out, untracked in


def test_each_file_once_and_paths_shown_as_the_user_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path / "sub")
    assert [p.as_posix() for p in walk(["b.yaml", "./b.yaml", "../a.yaml"], tmp_path / "sub")] == [
        "b.yaml", str(tmp_path / "a.yaml")]


@pytest.mark.parametrize(("data", "codec"), [
    (b"image: x\r\n", "utf-8"),
    (b"\xef\xbb\xbfimage: x\n", "utf-8"),
    ("\ufeffimage: \u00e9\n".encode("utf-16-le"), "utf-16-le"),
])
def test_the_encoding_and_byte_order_mark_come_back_as_read(tmp_path: Path, data: bytes, codec: str) -> None:
    path = tmp_path / "f.yaml"
    path.write_bytes(data)
    file = TextFile.read(path)
    assert file.codec == codec
    assert file.encode(file.text) == data
    assert "image:" in file.text and not file.text.startswith("\ufeff")


def test_bytes_that_are_not_text_are_an_error_naming_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_bytes(b"image: \xff\n")
    with pytest.raises(UnreadableFile, match="not UTF-8 text \\(byte 7 is invalid\\)"):
        TextFile.read(path)
