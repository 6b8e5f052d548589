from __future__ import annotations

import os
from pathlib import Path

import pytest

from pinguard.write.atomic import TOKEN, stage, temporary_path, write_bytes


def test_stage_writes_beside_the_target_under_the_name_a_journal_can_give_in_advance(tmp_path: Path) -> None:
    target = tmp_path / "pod.yaml"
    target.write_text("old\n")
    target.chmod(0o640)
    temporary = stage(target, b"new\n", token="0123abcd")
    assert Path(temporary) == temporary_path(target, "0123abcd") == tmp_path / ".pod.yaml.0123abcd.tmp"
    assert Path(temporary).read_bytes() == b"new\n" and os.stat(temporary).st_mode & 0o777 == 0o640
    assert target.read_text() == "old\n"


def test_stage_without_a_token_draws_one(tmp_path: Path) -> None:
    name = Path(stage(tmp_path / "pod.yaml", b"new\n")).name
    assert name.startswith(".pod.yaml.") and name.endswith(".tmp")
    assert TOKEN.fullmatch(name.removeprefix(".pod.yaml.").removesuffix(".tmp"))


def test_stage_never_writes_through_a_name_already_taken(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    temporary_path(tmp_path / "pod.yaml", "0123abcd").symlink_to(elsewhere)
    with pytest.raises(FileExistsError):
        stage(tmp_path / "pod.yaml", b"new\n", token="0123abcd")
    assert not elsewhere.exists()


def test_write_bytes_replaces_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.json"
    target.parent.mkdir()
    write_bytes(target, b"{}\n")
    write_bytes(target, b"[]\n")
    assert target.read_bytes() == b"[]\n" and [p.name for p in target.parent.iterdir()] == ["report.json"]
