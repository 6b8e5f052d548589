"""`pinguard pin` on golden files: `x.ext` pins to `x.golden.ext`; a file without a golden stays byte-identical.

Where `x.ext.scan` is there, it holds the exact `pinguard scan x.ext` output.
"""
from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from pinguard.write.journal import JOURNAL
from testing.lockdata import lock_for, locked_test_digest

TESTDATA = Path(__file__).parent.parent / "testdata" / "pin"
INPUTS = sorted(p for p in TESTDATA.rglob("*") if p.is_file() and ".golden" not in p.name and p.suffix != ".scan")


def _golden(path: Path) -> Path:
    stem, dot, ext = path.name.partition(".")
    golden = path.with_name(f"{stem}.golden.{ext}" if dot else f"{stem}.golden")
    return golden if golden.exists() else path


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(args, env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("source", INPUTS, ids=lambda p: str(p.relative_to(TESTDATA)))
def test_pin_matches_golden(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "tree"
    work.mkdir()
    target = work / source.name
    shutil.copyfile(source, target)
    target.chmod(0o640)
    monkeypatch.chdir(work)
    scanned = scan_paths([source.name])
    lockfile.write(work / "pinguard.lock", lock_for(scanned.found, scanned.actions))
    expected_scan = source.with_name(source.name + ".scan")
    if expected_scan.exists():
        assert _run(["scan", source.name])[1] == expected_scan.read_text(encoding="utf-8")

    status, _, err = _run(["pin", source.name])
    assert (status, err) == (0, "")
    assert target.read_bytes() == _golden(source).read_bytes()
    assert target.stat().st_mode & 0o777 == 0o640

    status, out, _ = _run(["pin", "--dry-run", source.name])  # a second pin has nothing left to do
    assert (status, out) == (0, "")
    assert target.read_bytes() == _golden(source).read_bytes()


POD = "kind: Pod\nspec:\n  containers:\n  - name: a\n    image: nginx:1.25\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "tree"
    work.mkdir()
    for name in ("a.yaml", "b.yaml"):
        (work / name).write_text(POD)
    monkeypatch.chdir(work)
    lockfile.write(work / "pinguard.lock", lock_for(scan_paths(["."]).found))
    return work


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_dry_run_prints_a_diff_and_writes_nothing(tree: Path) -> None:
    before = _snapshot(tree)
    status, out, _ = _run(["pin", "--dry-run", "a.yaml"])
    assert status == 1
    assert out.startswith("--- a/a.yaml\n+++ b/a.yaml\n")
    assert "-    image: nginx:1.25\n+    image: nginx:1.25@sha256:" in out
    assert _snapshot(tree) == before


def test_a_file_that_cannot_be_written_leaves_every_file_unchanged(tree: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from pinguard.write import commit as writing

    real_stage = writing.stage
    staged: list[Path] = []

    def failing_stage(path: Path, data: bytes, *, mode: int | None = None, sync: bool = True,
                      token: str | None = None) -> str:
        if staged:
            raise OSError(28, "No space left on device", str(path))
        staged.append(path)
        return real_stage(path, data, mode=mode, sync=sync, token=token)

    monkeypatch.setattr(writing, "stage", failing_stage)
    before = _snapshot(tree)
    status, _, err = _run(["pin"])
    assert status == 2
    assert "No space left on device; nothing was written" in err
    assert _snapshot(tree) == before  # the first file staged was not renamed either; no temporary left


def test_references_missing_from_the_lock_are_reported(tree: Path) -> None:
    (tree / "c.yaml").write_text(POD.replace("nginx:1.25", "redis:7.2"))
    status, _, err = _run(["pin"])
    assert status == 1
    assert "c.yaml:5:12: docker.io/library/redis:7.2 is not in pinguard.lock; run `pinguard pin --resolve`" in err
    assert "@sha256:" in (tree / "a.yaml").read_text()  # what is locked is still pinned
    assert (tree / "c.yaml").read_text() == POD.replace("nginx:1.25", "redis:7.2")


def test_a_broken_file_stops_every_write(tree: Path) -> None:
    (tree / "broken.yaml").write_text("kind: Pod\nspec: {image: nginx:1.25\n")
    (tree / "latin1.yaml").write_bytes("image: caf\xe9:1\n".encode("latin-1"))
    before = _snapshot(tree)
    status, _, err = _run(["pin"])
    assert status == 2
    assert "broken.yaml:" in err and "latin1.yaml:1:1: not UTF-8 text" in err and "nothing written" in err
    assert _snapshot(tree) == before


def test_symlink_out_of_the_tree_is_refused(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(POD)
    (tree / "link.yaml").symlink_to(outside)
    before = _snapshot(tree)
    status, _, err = _run(["pin"])
    assert status == 2 and "a symlink to" in err and "outside the tree" in err
    assert outside.read_text() == POD and _snapshot(tree) == before


# A child runs `pinguard pin` and SIGKILLs itself at the `when`-th call of one step of the commit; the next
# `pin` must leave every file pinned and nothing of pinguard's behind, and say what it repaired.
_DIE_AT = """
import os, signal, sys
from pinguard.write import commit as writing
from pinguard.cli import main

owner = {"writing": writing, "os": os, "journal": writing.Journal}[sys.argv[1]]
name, when = sys.argv[2], int(sys.argv[3])
real, calls = getattr(owner, name), []

def dying(*args, **kwargs):
    calls.append(name)
    if len(calls) == when:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)

setattr(owner, name, dying)
sys.exit(main(["pin"]))
"""
FILES = ("a.yaml", "b.yaml", "deploy/c.yaml", "deploy/d.yaml", "deploy/jobs/e.yaml")
UNDONE = "pinguard: undid an interrupted write in {root}: removed {count} temporary file{s}; no file had been changed\n"
FINISHED = ("pinguard: finished an interrupted write in {root}: {count} of 5 files were already renamed; "
            "renamed the rest\n")


@pytest.mark.parametrize(("step", "message", "count"), [
    (("journal", "append", 1), UNDONE, 0),  # the journal created, nothing in it yet
    (("writing", "stage", 1), UNDONE, 0),  # the plan journalled, no temporary file yet
    (("writing", "stage", 4), UNDONE, 3),
    (("os", "sync", 1), UNDONE, 5),  # every temporary file written, not yet flushed
    (("journal", "append", 2), UNDONE, 5),  # flushed, renaming not yet journalled
    (("os", "replace", 1), FINISHED, 0),
    (("os", "replace", 4), FINISHED, 3),
    (("writing", "sync_folders", 2), FINISHED, 5),  # every file renamed, the journal not yet removed
], ids=["empty-journal", "planned", "3-staged", "all-staged", "synced", "renaming", "3-renamed", "all-renamed"])
def test_a_pin_killed_at_any_step_is_repaired_by_the_next(step: tuple[str, str, int], message: str, count: int,
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = (tmp_path / "tree").resolve()
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(POD)
    monkeypatch.chdir(root)
    lockfile.write(root / "pinguard.lock", lock_for(scan_paths(["."]).found))
    pinned = POD.replace("nginx:1.25", "nginx:1.25@" + locked_test_digest("docker.io/library/nginx", "1.25"))

    child = subprocess.run([sys.executable, "-c", _DIE_AT, *map(str, step)], cwd=root, capture_output=True,
                           env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}, check=False)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert (root / JOURNAL).exists()
    assert len(list(root.rglob(".*.tmp"))) == (count if message is UNDONE else len(FILES) - count)

    status, out, err = _run(["pin"])
    assert status == 0
    assert err == message.format(root=root, count=count, s="" if count == 1 else "s")
    assert out == ("pinned 5 files\n" if message is UNDONE else "")  # undone, this run pins; finished, nothing left
    assert {name: (root / name).read_text() for name in FILES} == dict.fromkeys(FILES, pinned)
    assert list(root.rglob(".*")) == []
