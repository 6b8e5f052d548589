from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard import lockfile
from pinguard.cli import main
from pinguard.scanning import scan
from testing.lockdata import lock_for

POD = "kind: Pod\nspec:\n  containers:\n  - name: a\n    image: nginx:1.25\n"


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["check", *args], env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD)
    lockfile.write(tmp_path / "pinguard.lock", lock_for(scan(["pod.yaml"]).found))
    return tmp_path


def test_unpinned_then_pinned(tree: Path) -> None:
    status, out, _ = _run()
    assert status == 1
    assert out.startswith("pod.yaml:5:12: error: `nginx:1.25` has no digest") and out.endswith("1 error, 0 warnings\n")
    assert main(["pin"], env={}, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    assert _run() == (0, "", "")


def test_warnings_pass_unless_strict(tree: Path) -> None:
    (tree / "pod.yaml").write_text(POD.replace("nginx:1.25", "${IMAGE}"))
    status, out, _ = _run()
    assert status == 0 and "[templated]" in out and "[unused-lock-entry]" in out
    assert _run("--strict")[0] == 1


def test_unreadable_file_is_status_2_and_the_rest_is_still_checked(tree: Path) -> None:
    (tree / "broken.yaml").write_text("kind: Pod\nspec: {image: nginx:1.25\n")
    status, out, err = _run()
    assert status == 2
    assert err.startswith("pinguard: broken.yaml:") and "[unpinned]" in out


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda t: (t / "pinguard.lock").write_text("version = 3\n"), "written by a newer pinguard"),
        (lambda t: (t / ".pinguard.yaml").write_text("rules: {nope: error}\n"), "unknown rule 'nope'"),
    ],
)
def test_bad_lockfile_or_policy_is_status_2(tree: Path, setup: object, message: str) -> None:
    setup(tree)  # type: ignore[operator]
    status, out, err = _run()
    assert status == 2 and message in err and out == "" and "Traceback" not in err


def test_project_policy_file_is_picked_up(tree: Path) -> None:
    (tree / ".pinguard.yaml").write_text("extends: default\nrules:\n  unpinned: 'off'\n")
    assert _run() == (0, "", "")


def test_output_file(tree: Path) -> None:
    status, out, _ = _run("--format", "json", "--output", "report.json")
    assert (status, out) == (1, "")
    assert '"rule": "unpinned"' in (tree / "report.json").read_text()


def test_files_named_one_by_one_do_not_judge_the_whole_lockfile(tree: Path) -> None:
    (tree / "other.yaml").write_text(POD.replace("nginx:1.25", "redis:7.2"))
    lockfile.write(tree / "pinguard.lock", lock_for(scan(["."]).found))
    assert main(["pin"], env={}, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    (tree / "other.yaml").unlink()
    assert "[unused-lock-entry]" in _run()[1]  # the whole tree: redis is locked for nothing
    assert _run("pod.yaml") == (0, "", "")  # as a pre-commit hook passes it: nothing to say about the rest


def test_a_report_that_cannot_be_written_is_an_error_not_a_traceback(tree: Path) -> None:
    status, _, err = _run("--output", "missing/report.json")
    assert status == 2 and "missing/report.json: cannot write the report" in err and "Traceback" not in err
