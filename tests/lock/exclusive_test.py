"""What a writer killed while staging a new lockfile leaves (`.pinguard.lock.TOKEN.tmp`) is removed by the next
writer, which says so; a staged lockfile a journal still names, another's file, or a dry run's are left alone."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock.exclusive import exclusive
from pinguard.write.atomic import stage
from pinguard.write.journal import JOURNAL


def killed_while_staging(lockfile: Path) -> Path:
    """What `lockfile.write` leaves when killed between staging the new lock and renaming it over the old."""
    return Path(stage(lockfile, b"version = 1\n"))


def test_the_next_lock_removes_a_staged_lockfile_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text("kind: Pod\n")
    left = killed_while_staging(tmp_path / "pinguard.lock")
    err = io.StringIO()
    assert main(["lock", "pod.yaml", "--allow-empty"], env={"HOME": str(tmp_path)}, stdout=io.StringIO(),
                stderr=err) == 0
    assert not left.exists()
    said = f"pinguard: warning: removed {left.name}, a new lockfile a killed run left staged\n"  # named as the lock is
    assert said in err.getvalue()
    assert not [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")]


def test_what_is_no_staged_lockfile_of_this_user_is_left(tmp_path: Path) -> None:
    lockfile = tmp_path / "pinguard.lock"
    others = [tmp_path / ".pinguard.lock.notatoken.tmp", tmp_path / ".other.lock.0123abcd.tmp"]
    for other in others:
        other.write_text("kept")
    linked = tmp_path / ".pinguard.lock.0123abcd.tmp"
    os.symlink(tmp_path / "elsewhere", linked)
    with exclusive(lockfile) as cleared:
        assert cleared == []
    assert all(other.exists() for other in others) and linked.is_symlink()


def test_a_staged_lockfile_a_journal_may_name_is_left_for_its_recovery(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    left = killed_while_staging(tmp_path / "deploy" / "pinguard.lock")
    (tmp_path / JOURNAL).write_text("")  # a commit of `update` above the lock, killed while renaming
    with exclusive(tmp_path / "deploy" / "pinguard.lock") as cleared:
        assert cleared == []
    assert left.exists()


def test_a_dry_run_clears_nothing(tmp_path: Path) -> None:
    left = killed_while_staging(tmp_path / "pinguard.lock")
    with exclusive(tmp_path / "pinguard.lock", clear=False) as cleared:
        assert cleared == []
    assert left.exists()
    with exclusive(tmp_path / "pinguard.lock") as cleared:
        assert cleared == [f"removed {left}, a new lockfile a killed run left staged"]
