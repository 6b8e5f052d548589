from __future__ import annotations

import os
import stat
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


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_takes_the_mode_the_umask_leaves_and_the_umask_is_never_changed(
        umask: int, mode: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_umask = os.umask
    previous = set_umask(umask)
    try:
        # Setting the umask to read it would leave other threads, for that moment, creating files open to all.
        monkeypatch.setattr(os, "umask", lambda _: pytest.fail("the process umask was changed"))
        write_bytes(tmp_path / "new.yaml", b"new\n")
    finally:
        set_umask(previous)
    assert stat.S_IMODE((tmp_path / "new.yaml").stat().st_mode) == mode


def test_an_existing_file_keeps_its_mode_whatever_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "secret.yaml"
    target.write_text("old\n")
    target.chmod(0o600)
    previous = os.umask(0)
    try:
        write_bytes(target, b"new\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.read_bytes() == b"new\n"
