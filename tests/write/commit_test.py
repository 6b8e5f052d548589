"""`commit` writes many files all or none, and `recover` repairs what a killed commit left.

Kills at each step of a real run are in tests/commands/pin_test.py, torn and hostile journals in
journal_test.py; here the journal is driven directly: interrupted renames, a journal still in use.
"""
from __future__ import annotations

import fcntl
import io
import os
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.errors import PinguardError
from pinguard.lock import lockfile
from pinguard.read.files import TextFile
from pinguard.scan.paths import scan_paths
from pinguard.write import atomic, journal
from pinguard.write import commit as writing
from pinguard.write.commit import commit
from pinguard.write.journal import JOURNAL
from testing.lockdata import lock_for
from tests.write.conftest import (
    NAMES,
    contents,
    journal_record,
    leftovers,
    recovered,
    stage_by_hand,
    write_journal,
)


def _changes(root: Path) -> list[tuple[TextFile, str]]:
    return [(TextFile.read(root / name), f"new {name}\n") for name in NAMES]


class Killed(BaseException):
    """Stands for the process dying: like Ctrl-C, nothing in `commit` catches it."""


def _die(*args: object) -> None:
    raise Killed


def test_commit_writes_every_file_keeps_modes_and_leaves_nothing_behind(tree: Path) -> None:
    commit(_changes(tree), [tree])
    assert contents(tree) == {name: f"new {name}\n" for name in NAMES}
    assert all((tree / name).stat().st_mode & 0o777 == 0o640 for name in NAMES)
    assert leftovers(tree) == []


@pytest.mark.parametrize("renamed", range(len(NAMES)))
def test_a_run_dying_while_renaming_is_finished_by_the_next(tree: Path, renamed: int,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    real_replace = os.replace
    calls: list[str] = []

    def dying_replace(source: str, destination: Path) -> None:
        if len(calls) == renamed:
            raise Killed
        calls.append(source)
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", dying_replace)
    with pytest.raises(Killed):
        commit(_changes(tree), [tree])
    monkeypatch.undo()
    assert (tree / JOURNAL).exists() and len(leftovers(tree)) == 1 + len(NAMES) - renamed
    assert recovered(tree) == (f"pinguard: finished an interrupted write in {tree}: {renamed} of {len(NAMES)} files "
                              "were already renamed; renamed the rest\n")
    assert contents(tree) == {name: f"new {name}\n" for name in NAMES}
    assert all((tree / name).stat().st_mode & 0o777 == 0o640 for name in NAMES)
    assert leftovers(tree) == []
    assert recovered(tree) == ""  # done: nothing left to repair


def test_an_interrupt_while_staging_leaves_every_file_old_and_nothing_behind(tree: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    real_stage = atomic.stage
    staged: list[Path] = []

    def interrupted_stage(path: Path, data: bytes, **kwargs: object) -> str:
        if staged:
            raise KeyboardInterrupt
        staged.append(path)
        return real_stage(path, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(writing, "stage", interrupted_stage)
    with pytest.raises(KeyboardInterrupt):
        commit(_changes(tree), [tree])
    assert contents(tree) == {name: f"old {name}\n" for name in NAMES}
    assert leftovers(tree) == []


def test_a_rename_failing_midway_says_what_was_written_and_leaves_no_journal(tree: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    real_replace = os.replace
    done: list[str] = []

    def failing_replace(source: str, destination: Path) -> None:
        if done:
            raise OSError(2, "No such file or directory", source)
        done.append(source)
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(PinguardError, match=f"cannot replace {tree / NAMES[1]}: No such file or directory; "
                                            f"already written: {tree / NAMES[0]}; not written: {tree / NAMES[1]}, "
                                            f"{tree / NAMES[2]}$"):
        commit(_changes(tree), [tree])
    assert leftovers(tree) == []


@pytest.mark.parametrize("when", ["staging the first", "staging the last", "renaming the first"])
def test_an_edit_saved_while_the_commit_runs_is_never_overwritten(tree: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   when: str) -> None:
    """An editor saves `a/two.yaml` at one moment of the commit: that file and those after it keep what they hold,
    the ones renamed before stay pinned, no temporary file or journal is left, and the next run pins the rest."""
    edited = tree / NAMES[1]
    real_stage, real_replace = writing.stage, os.replace
    staged: list[Path] = []

    def stage(path: Path, data: bytes, **options: object) -> str:
        staged.append(path)
        if (when == "staging the first" and len(staged) == 1) or (when == "staging the last" and
                                                                   len(staged) == len(NAMES)):
            edited.write_text("saved by an editor\n")
        return real_stage(path, data, **options)  # type: ignore[arg-type]

    def replace(source: str, destination: Path) -> None:
        real_replace(source, destination)
        if when == "renaming the first":
            edited.write_text("saved by an editor\n")

    monkeypatch.setattr(writing, "stage", stage)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(PinguardError, match=f"{edited}: changed while pinguard was writing, kept as it is now; "
                                            f"already written: {tree / NAMES[0]}; not written: {edited}, "):
        commit(_changes(tree), [tree])
    assert contents(tree) == {NAMES[0]: f"new {NAMES[0]}\n", NAMES[1]: "saved by an editor\n",
                               NAMES[2]: f"old {NAMES[2]}\n"}
    assert leftovers(tree) == []
    assert recovered(tree) == ""  # nothing left to repair
    monkeypatch.setattr(os, "replace", real_replace)
    commit([(TextFile.read(tree / NAMES[2]), f"new {NAMES[2]}\n")], [tree])
    assert (tree / NAMES[2]).read_text() == f"new {NAMES[2]}\n"


def test_a_file_reached_through_a_symlink_in_the_tree_is_written_once(tree: Path) -> None:
    (tree / "link.yaml").symlink_to(tree / NAMES[0])
    changes = [*_changes(tree), (TextFile.read(tree / "link.yaml"), f"new {NAMES[0]}\n")]
    commit(changes, [tree])
    assert contents(tree) == {name: f"new {name}\n" for name in NAMES}
    assert (tree / "link.yaml").is_symlink() and leftovers(tree) == []


def test_the_journal_is_in_the_folder_holding_every_file_and_found_from_any_tree_below(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Path] = []
    real_create = journal.Journal.create

    def watched_create(root: Path) -> journal.Journal:
        seen.append(root)
        return real_create(root)

    monkeypatch.setattr(journal.Journal, "create", watched_create)
    monkeypatch.setattr(os, "replace", _die)
    with pytest.raises(Killed):
        commit(_changes(tree), [tree / "a", tree / "b"])
    monkeypatch.undo()
    assert seen == [tree]
    assert recovered(tree / "b" / "deeper").startswith(f"pinguard: finished an interrupted write in {tree}: 0 of 3")
    assert contents(tree) == {name: f"new {name}\n" for name in NAMES}


def test_a_journal_still_held_by_a_live_run_is_left_alone_and_blocks_a_second_commit(tree: Path) -> None:
    write_journal(tree, [journal_record(NAMES[0])], renaming=True)
    staged = stage_by_hand(tree, NAMES[0])
    with open(tree / JOURNAL, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        assert recovered(tree) == ""
        assert staged.exists() and (tree / JOURNAL).exists()
        with pytest.raises(PinguardError, match=r"another pinguard is writing this tree.*; nothing was written$"):
            commit(_changes(tree), [tree])
    assert contents(tree)[NAMES[1]] == f"old {NAMES[1]}\n"
    assert "finished an interrupted write" in recovered(tree)  # the holder gone, it is a dead run's


# fsyncs of a commit of files in two folders: 1 the journal's plan, 2 its folder, 3 the journal's last line
@pytest.mark.parametrize("failing", [1, 3], ids=["plan", "renaming"])
def test_a_journal_that_cannot_be_written_stops_everything(tree: Path, failing: int,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    real_fsync = os.fsync
    calls: list[int] = []

    def full_disk(fd: int) -> None:
        calls.append(fd)
        if len(calls) == failing:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(PinguardError, match=f"cannot write {tree / JOURNAL}: No space left on device; nothing was"):
        commit(_changes(tree), [tree])
    assert contents(tree) == {name: f"old {name}\n" for name in NAMES}
    assert leftovers(tree) == []


POD = "kind: Pod\nspec:\n  containers:\n  - name: a\n    image: nginx:1.25\n"


def test_update_repairs_a_killed_run_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = (tmp_path / "work").resolve()
    (work / "k8s").mkdir(parents=True)
    for name in ("a.yaml", "b.yaml"):
        (work / "k8s" / name).write_text(POD)
    monkeypatch.chdir(work)
    lockfile.write(work / "pinguard.lock", lock_for(scan_paths(["k8s"]).found))
    changes = [(TextFile.read(work / "k8s" / name), POD.replace("1.25", "1.25@sha256:" + "0" * 64))
               for name in ("a.yaml", "b.yaml")]
    changes.append((TextFile.read(work / "pinguard.lock"), (work / "pinguard.lock").read_text() + "\n"))
    with monkeypatch.context() as patched, pytest.raises(Killed):
        patched.setattr(os, "replace", _die)
        commit(changes, [work / "k8s"])  # the lockfile is outside k8s: the journal is in `work`
    out, err = io.StringIO(), io.StringIO()
    assert main(["update", "k8s"], env={}, stdout=out, stderr=err) == 0
    assert err.getvalue() == (f"pinguard: finished an interrupted write in {work}: 0 of 3 files were already "
                              "renamed; renamed the rest\n")
    assert "@sha256:" + "0" * 64 in (work / "k8s" / "b.yaml").read_text()
    assert leftovers(work) == [".pinguard.lock.lck"]
