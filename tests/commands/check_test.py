from __future__ import annotations

import io
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
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
    lockfile.write(tmp_path / "pinguard.lock", lock_for(scan_paths(["pod.yaml"]).found))
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


def test_each_file_is_parsed_once_for_its_references_and_its_documents(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The document rules (Ray, under aws-dlc) read the documents the source parsed, even after the
    source parsed the runtimeEnvYAML inside them."""
    text = (Path(__file__).resolve().parents[2] / "training" / "rayjob.yaml").read_text()
    (tree / "rayjob.yaml").write_text(text)
    parsed: list[str] = []
    compose_all = yaml.compose_all

    def counted(stream: Any, Loader: Any) -> Any:
        parsed.append(getattr(stream, "text", stream))  # a file's text is handed over in pieces (yamlnodes._Chunks)
        return compose_all(stream, Loader=Loader)

    monkeypatch.setattr(yaml, "compose_all", counted)
    status, out, _ = _run("--policy", "aws-dlc", "rayjob.yaml")
    assert status == 1 and "[unpinned]" in out
    assert parsed.count(text) == 1


def test_output_file(tree: Path) -> None:
    status, out, _ = _run("--format", "json", "--output", "report.json")
    assert (status, out) == (1, "")
    assert '"rule": "unpinned"' in (tree / "report.json").read_text()


def test_files_named_one_by_one_do_not_judge_the_whole_lockfile(tree: Path) -> None:
    (tree / "other.yaml").write_text(POD.replace("nginx:1.25", "redis:7.2"))
    lockfile.write(tree / "pinguard.lock", lock_for(scan_paths(["."]).found))
    assert main(["pin"], env={}, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    (tree / "other.yaml").unlink()
    assert "[unused-lock-entry]" in _run()[1]  # the whole tree: redis is locked for nothing
    assert _run("pod.yaml") == (0, "", "")  # as a pre-commit hook passes it: nothing to say about the rest


def test_a_report_that_cannot_be_written_is_an_error_not_a_traceback(tree: Path) -> None:
    status, _, err = _run("--output", "missing/report.json")
    assert status == 2 and "missing/report.json: cannot write the report" in err and "Traceback" not in err


def test_output_replaces_a_regular_file_in_one_rename(tree: Path) -> None:
    (tree / "report.json").write_text("old report\n")
    (tree / "report.json").chmod(0o640)
    before = (tree / "report.json").stat().st_ino
    assert _run("--format", "json", "--output", "report.json")[:2] == (1, "")
    assert '"rule": "unpinned"' in (tree / "report.json").read_text()
    assert (tree / "report.json").stat().st_ino != before and (tree / "report.json").stat().st_mode & 0o777 == 0o640
    assert not list(tree.glob(".*.tmp"))


def test_output_through_a_symlink_replaces_the_file_it_leads_to(tree: Path) -> None:
    (tree / "reports").mkdir()
    (tree / "reports" / "last.json").write_text("old report\n")
    (tree / "report.json").symlink_to("reports/last.json")
    assert _run("--format", "json", "--output", "report.json")[:2] == (1, "")
    assert (tree / "report.json").is_symlink() and os.readlink(tree / "report.json") == "reports/last.json"
    assert '"rule": "unpinned"' in (tree / "reports" / "last.json").read_text()


def test_output_through_a_dangling_symlink_creates_the_file_it_names(tree: Path) -> None:
    (tree / "report.txt").symlink_to("new.txt")  # not .json: check would read the dangling link as an input
    assert _run("--format", "json", "--output", "report.txt")[:2] == (1, "")
    assert (tree / "report.txt").is_symlink() and '"rule": "unpinned"' in (tree / "new.txt").read_text()


def test_output_to_a_fifo_is_written_through(tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append((tree / "pipe").read_bytes()))
    reader.start()
    status, out, _ = _run("--format", "json", "--output", "pipe")
    reader.join(timeout=10)
    assert (status, out) == (1, "") and stat.S_ISFIFO((tree / "pipe").lstat().st_mode)
    assert b'"rule": "unpinned"' in received[0]


@pytest.fixture
def no_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    """A device must never be renamed over: run as root, a failing test would break it for everyone."""
    from pinguard.write import atomic

    def refuse(path: Path, data: bytes) -> None:
        raise AssertionError(f"would replace {path}")

    monkeypatch.setattr(atomic, "write_bytes", refuse)


@pytest.mark.usefixtures("no_rename")
def test_output_to_a_device_is_written_through(tree: Path) -> None:
    assert _run("--output", "/dev/null")[:2] == (1, "")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.usefixtures("no_rename")
def test_output_to_dev_stdout_reaches_stdout(tree: Path, capfd: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run("--output", "/dev/stdout")  # the process's own stdout (a pipe or file pytest holds)
    assert (status, out) == (1, "") and capfd.readouterr().out.startswith("pod.yaml:5:12: error:")


def test_output_dash_is_stdout(tree: Path) -> None:
    status, out, _ = _run("--output", "-")
    assert status == 1 and out.startswith("pod.yaml:5:12: error:") and not (tree / "-").exists()


def test_output_to_a_folder_is_refused(tree: Path) -> None:
    (tree / "reports").mkdir()
    status, out, err = _run("--output", "reports")
    assert (status, out) == (2, "") and err == "pinguard: error: reports: is a folder; --output takes a file name\n"
    assert list((tree / "reports").iterdir()) == []
