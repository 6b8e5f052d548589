"""`recover` repairs what a killed commit left, driven directly: torn, empty, stale and hostile journals."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.write.atomic import temporary_path
from pinguard.write.journal import JOURNAL
from tests.write.conftest import (
    NAMES,
    TOKEN,
    contents,
    journal_record,
    leftovers,
    recovered,
    stage_by_hand,
    write_journal,
)


def test_a_journal_torn_while_being_written_is_undone(tree: Path) -> None:
    write_journal(tree, [journal_record(NAMES[0])], renaming=False, tail=b'{"target": "a/tw')
    stage_by_hand(tree, NAMES[0])
    staging = stage_by_hand(tree, NAMES[1], "half of it")  # its line was torn: not proven pinguard's
    assert recovered(tree) == (f"pinguard: undid an interrupted write in {tree}: removed 1 temporary file; "
                              "no file had been changed\n")
    assert contents(tree) == {name: f"old {name}\n" for name in NAMES}
    assert leftovers(tree) == [str(staging.relative_to(tree))]



def test_an_empty_journal_is_removed(tree: Path) -> None:
    (tree / JOURNAL).write_bytes(b"")
    assert "removed 0 temporary files" in recovered(tree)
    assert leftovers(tree) == []



def test_files_changed_since_the_run_died_are_left_as_they_are(tree: Path) -> None:
    write_journal(tree, [journal_record(name) for name in NAMES], renaming=True)
    for name in NAMES:
        stage_by_hand(tree, name)
    (tree / NAMES[2]).write_text("edited by hand\n")
    assert recovered(tree) == (f"pinguard: finished an interrupted write in {tree}: 0 of 3 files were already "
                              "renamed; renamed the rest, except 1 changed since, left as they are\n")
    assert contents(tree) == {NAMES[0]: f"new {NAMES[0]}\n", NAMES[1]: f"new {NAMES[1]}\n",
                               NAMES[2]: "edited by hand\n"}
    assert leftovers(tree) == []



@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    """A file outside the tree with a temporary file beside it, as a hostile journal would name them."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "x.yaml").write_text("old outside\n")
    temporary_path(folder / "x.yaml", TOKEN).write_text("new outside\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    yield folder
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before



@pytest.mark.parametrize("renaming", [True, False], ids=["forward", "back"])
@pytest.mark.parametrize(("record", "reason"), [
    ({**journal_record("../outside/x.yaml")}, "not a path inside the journal's folder"),
    ({**journal_record("a/../../outside/x.yaml")}, "not a path inside the journal's folder"),
    ({**journal_record("ABSOLUTE")}, "not a path inside the journal's folder"),
    ({**journal_record(NAMES[0]), "temporary": "../outside/x.yaml"}, "names another temporary file"),
    ({**journal_record(NAMES[0]), "temporary": "a/one.yaml"}, "names another temporary file"),
    ({**journal_record(NAMES[0]), "old": "not a digest"}, "no SHA-256 digests"),
    ({**journal_record("link/x.yaml")}, "through a symlink"),
    ("a string", "not a path inside"),
])
def test_a_journal_naming_anything_outside_its_folder_is_refused_and_nothing_is_touched(
        tree: Path, outside: Path, record: dict[str, str] | str, reason: str, renaming: bool) -> None:
    if isinstance(record, dict) and record["target"] == "ABSOLUTE":
        record = {**journal_record(str(outside / "x.yaml"))}
    (tree / "link").symlink_to(outside)
    write_journal(tree, [journal_record(NAMES[0]), record], renaming=renaming)
    staged = stage_by_hand(tree, NAMES[0])
    with pytest.raises(PinguardError, match=f"not a journal pinguard can act on \\(.*{reason}"):
        recovered(tree)
    assert staged.exists() and (tree / JOURNAL).exists()  # nothing done until a person looks
    assert contents(tree) == {name: f"old {name}\n" for name in NAMES}



@pytest.mark.parametrize("header", [
    {"journal": "pinguard", "version": 1, "token": "../../etc"},
    {"journal": "pinguard", "version": 2, "token": TOKEN},
    {"journal": "other", "version": 1, "token": TOKEN},
])
def test_a_journal_with_a_foreign_header_is_refused(tree: Path, header: dict[str, object]) -> None:
    (tree / JOURNAL).write_text(json.dumps(header) + "\n")
    with pytest.raises(PinguardError, match="its first line is not a pinguard journal's"):
        recovered(tree)



def test_a_renaming_record_that_miscounts_is_refused(tree: Path) -> None:
    write_journal(tree, [journal_record(NAMES[0])], renaming=False, tail=b'{"renaming": 3}\n')
    with pytest.raises(PinguardError, match="does not count its entries"):
        recovered(tree)



def test_a_journal_that_is_a_symlink_is_left_alone(tree: Path, tmp_path: Path) -> None:
    write_journal(tree, [journal_record(NAMES[0])], renaming=True)
    (tree / JOURNAL).rename(tmp_path / "elsewhere")
    (tree / JOURNAL).symlink_to(tmp_path / "elsewhere")
    staged = stage_by_hand(tree, NAMES[0])
    assert recovered(tree) == f"pinguard: left {tree / JOURNAL} alone: a symlink, not a journal pinguard wrote\n"
    assert staged.exists() and contents(tree)[NAMES[0]] == f"old {NAMES[0]}\n"
