"""pinguard pins itself: its own workflows and action use actions pinned to the commits its lockfile holds, and
`pinguard check` (which CI runs on them, `.ci/run`) fails the moment one is not."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

from pinguard.cli import main

ROOT = Path(__file__).resolve().parents[2]
CHECKED = (".github/workflows", "examples/workflows", "action.yml")  # what .ci/run checks


def _check(root: Path) -> tuple[int, str]:
    out = io.StringIO()
    status = main(["check", "--lockfile", str(root / "pinguard.lock"), *(str(root / path) for path in CHECKED)],
                  env={"HOME": str(root)}, stdout=out, stderr=out)
    return status, out.getvalue()


def test_the_repository_s_own_actions_are_pinned_and_locked() -> None:
    assert _check(ROOT) == (0, "")


def test_ci_runs_the_same_check() -> None:
    assert f"pinguard check {' '.join(CHECKED)}" in (ROOT / ".ci" / "run").read_text()


def test_an_action_moved_back_to_a_tag_fails_the_check(tmp_path: Path) -> None:
    for path in (*CHECKED, "pinguard.lock"):
        source = ROOT / path
        if source.is_dir():
            shutil.copytree(source, tmp_path / path)
        else:
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, tmp_path / path)
    workflow = tmp_path / ".github" / "workflows" / "ci.yml"
    text = workflow.read_text()
    pinned = next(line for line in text.splitlines() if "actions/checkout@" in line)
    workflow.write_text(text.replace(pinned, pinned.split("@")[0] + "@v6"))
    status, out = _check(tmp_path)
    assert status == 1 and "unpinned-action" in out and "actions/checkout@v6" in out
