"""Running a tool bounded in size and time: what it wrote, its status, and why it was stopped."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pinguard.read.tool import CannotStart, TooMuchOutput, TooSlow, run_tool


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "tool"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_run_gives_its_status_its_output_and_the_start_of_its_complaint(tmp_path: Path) -> None:
    tool = _script(tmp_path, 'echo "$WHO"; printf "%0100d" 0 >&2; exit 3\n')
    done = run_tool([tool], {"WHO": "handed", "PATH": os.defpath}, timeout=60.0, max_out=1 << 16, err_kept=10)
    assert (done.status, done.out, done.err) == (3, b"handed\n", b"0" * 10)


def test_a_tool_that_writes_without_end_is_stopped_past_its_bytes(tmp_path: Path) -> None:
    with pytest.raises(TooMuchOutput):
        run_tool([_script(tmp_path, "exec yes\n")], None, timeout=60.0, max_out=1 << 16, err_kept=10)


def test_a_tool_that_does_not_finish_is_stopped_at_its_time(tmp_path: Path) -> None:
    with pytest.raises(TooSlow):
        run_tool([_script(tmp_path, "sleep 30 &\nexec sleep 30\n")], None, timeout=0.5, max_out=1 << 16, err_kept=10)


def test_a_tool_that_cannot_start_says_why(tmp_path: Path) -> None:
    with pytest.raises(CannotStart, match="No such file or directory"):
        run_tool([str(tmp_path / "missing")], None, timeout=60.0, max_out=1 << 16, err_kept=10)
