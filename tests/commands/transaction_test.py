"""`WriteTransaction`: a real run repairs what a killed run left before anything else and commits all or none; a
dry run touches nothing and prints the diff."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from pinguard.commands.options import Options
from pinguard.commands.transaction import WriteTransaction
from pinguard.read.files import TextFile
from pinguard.write.commit import commit
from pinguard.write.journal import JOURNAL

NAMES = ("one.yaml", "two.yaml")


class Killed(BaseException):
    """Stands for the process dying between two renames."""


@pytest.fixture
def killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tree whose last commit died after its first rename: one file new, one old, the journal left."""
    for name in NAMES:
        (tmp_path / name).write_text(f"old {name}\n")
    real_replace = os.replace
    renamed: list[str] = []

    def dying_replace(source: str, destination: Path) -> None:
        if renamed:
            raise Killed
        renamed.append(source)
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", dying_replace)
    with pytest.raises(Killed):
        commit(_changes(tmp_path, "new"), [tmp_path])
    monkeypatch.undo()
    assert (tmp_path / JOURNAL).exists()
    return tmp_path


def _changes(root: Path, word: str) -> list[tuple[TextFile, str]]:
    return [(TextFile.read(root / name), f"{word} {name}\n") for name in NAMES]


def _contents(root: Path) -> list[str]:
    return [(root / name).read_text() for name in NAMES]


def test_a_dry_run_repairs_nothing_writes_nothing_and_prints_the_diff(killed: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    before = _contents(killed)
    writes = WriteTransaction.begin([str(killed)], Options(out, err), dry_run=True)
    writes.commit(_changes(killed, "newer"))
    assert _contents(killed) == before and (killed / JOURNAL).exists() and err.getvalue() == ""
    diff = out.getvalue()
    assert f"+newer {NAMES[1]}\n" in diff and f"-old {NAMES[1]}\n" in diff and diff.startswith("--- ")


def test_a_dry_run_diff_can_be_fenced_for_markdown(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text("old\n")
    out = io.StringIO()
    writes = WriteTransaction.begin([str(tmp_path)], Options(out, io.StringIO()), dry_run=True)
    writes.commit([(TextFile.read(tmp_path / "one.yaml"), "new\n")], fenced=True)
    assert out.getvalue().startswith("\n```diff\n--- ") and out.getvalue().endswith("+new\n```\n")
    empty = io.StringIO()
    WriteTransaction.begin([str(tmp_path)], Options(empty, io.StringIO()), dry_run=True).commit([], fenced=True)
    assert empty.getvalue() == ""  # nothing would change: no empty block


def test_a_real_run_repairs_the_killed_run_first_then_commits(killed: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    writes = WriteTransaction.begin([str(killed)], Options(out, err), dry_run=False)
    assert err.getvalue() == (f"pinguard: finished an interrupted write in {killed.resolve()}: 1 of 2 files were "
                              "already renamed; renamed the rest\n")
    assert _contents(killed) == [f"new {name}\n" for name in NAMES] and not (killed / JOURNAL).exists()
    writes.commit(_changes(killed, "newer"))
    assert _contents(killed) == [f"newer {name}\n" for name in NAMES] and out.getvalue() == ""


@pytest.mark.parametrize("dry_run", [True, False])
def test_exclusive_clears_and_names_a_killed_writers_staged_lockfile_only_for_real(tmp_path: Path,
                                                                                   dry_run: bool) -> None:
    lock = tmp_path / "pinguard.lock"
    staged = tmp_path / ".pinguard.lock.0123abcd.tmp"
    staged.write_text("version: 1\n")
    err = io.StringIO()
    writes = WriteTransaction.begin([str(tmp_path)], Options(io.StringIO(), err, lockfile=lock), dry_run=dry_run)
    with writes.exclusive():
        assert staged.exists() is dry_run
    said = f"pinguard: removed {staged}, a new lockfile a killed run left staged\n"
    assert err.getvalue() == ("" if dry_run else said)
