"""A hostile `.pinguard-journal` committed to a repository: `pin` in a fresh clone refuses it in one line.

The journal is left for a person to look at; nothing else is written, and reading it costs
no more memory than its first bad line.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from pinguard.write.journal import JOURNAL
from testing.costs import peak_memory
from testing.lockdata import lock_for

POD = "kind: Pod\nspec:\n  containers:\n  - name: a\n    image: nginx:1.25\n"
HEADER = json.dumps({"journal": "pinguard", "version": 1, "token": "1a2b3c4d"}).encode() + b"\n"


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh clone: a manifest, its lock, and whatever journal a test commits beside them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD)
    lockfile.write(tmp_path / "pinguard.lock", lock_for(scan_paths(["pod.yaml"]).found))
    return tmp_path


def _pin() -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["pin"], env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _refused(clone: Path, reason: str) -> None:
    before = (clone / JOURNAL).stat()
    status, out, err = _pin()
    assert (status, out) == (2, "")
    assert err == (f"pinguard: error: {clone / JOURNAL}: not a journal pinguard can act on ({reason}); nothing was "
                   "written: look at it, then remove it\n")
    assert (clone / "pod.yaml").read_text() == POD  # not pinned
    after = (clone / JOURNAL).stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


@pytest.mark.parametrize("prefix", [b"", HEADER], ids=["first-line", "entry-line"])
@pytest.mark.parametrize(("depth", "reason"), [(200_000, "a line longer than the 64 KiB any commit writes"),
                                               (30_000, "JSON nested too deeply")])
def test_a_line_nested_deep_is_refused_in_one_line(clone: Path, prefix: bytes, depth: int, reason: str) -> None:
    (clone / JOURNAL).write_bytes(prefix + b"[" * depth + b"]" * depth + b"\n")
    _refused(clone, reason)


def test_a_100_mb_journal_is_refused_without_reading_it(clone: Path) -> None:
    with open(clone / JOURNAL, "wb") as handle:
        handle.write(HEADER)
        handle.truncate(100 << 20)  # sparse: 100 MB to read, none on disk
    _, peak = peak_memory(lambda: _refused(clone, f"{100 << 20} bytes, more than the 64 MiB any commit writes"))
    assert peak < 4 << 20


def test_one_long_line_is_refused_after_reading_no_more_than_a_line_may_hold(clone: Path) -> None:
    (clone / JOURNAL).write_bytes(HEADER + b'"' + b"x" * (32 << 20) + b'"\n')
    _, peak = peak_memory(lambda: _refused(clone, "a line longer than the 64 KiB any commit writes"))
    assert peak < 4 << 20


@pytest.mark.parametrize("lines", [10_000, 40_000])
def test_many_bad_lines_cost_no_more_than_the_first(clone: Path, lines: int) -> None:
    (clone / JOURNAL).write_bytes(HEADER + b"{}\n" * lines)
    _, peak = peak_memory(lambda: _refused(clone, "None is not a path inside the journal's folder"))
    assert peak < 2 << 20  # the same for four times the lines: only the first is read
