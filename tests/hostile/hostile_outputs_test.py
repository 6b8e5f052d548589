"""Every `--output` of the command line: device nodes, FIFOs and symlinks kept, folders refused, alike.

`check --output` and `export admission --output` go through `pinguard.write.atomic.write_output`; each
case runs through `pinguard.cli.main` for both. Also: a lockfile path that would break the
export's header.
"""
from __future__ import annotations

import argparse
import io
import os
import shlex
import stat
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

from pinguard import cli
from pinguard.cli import main
from pinguard.commands import flags
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.write import atomic
from testing.lockdata import INDEX, locked_test_digest

NGINX = "docker.io/library/nginx"
LOCK = Lock().with_entries([LockEntry(NGINX, "1.25", locked_test_digest(NGINX, "1.25"), INDEX, 0, "other", None, "t",
                                      {})])
COMMANDS = {"check": ["check", "pod.yaml"], "export": ["export", "admission"]}
MARK = {"check": b"[unpinned]", "export": b"kind: ValidatingAdmissionPolicy"}


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text("kind: Pod\nspec:\n  containers:\n  - name: a\n    image: nginx:1.25\n")
    lockfile.write(tmp_path / "pinguard.lock", LOCK)
    return tmp_path


@pytest.fixture
def no_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    """A device must never be renamed over: run as root, a failing test would break it for everyone."""
    def refuse(path: Path, data: bytes) -> None:
        raise AssertionError(f"would replace {path}")

    monkeypatch.setattr(atomic, "write_bytes", refuse)


def _run(command: str, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([*COMMANDS[command], *args], env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _succeeded(command: str, status: int) -> bool:
    return status == (1 if command == "check" else 0)  # check finds the pod unpinned


def test_every_output_option_goes_through_the_one_writer() -> None:
    subcommands = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    outputs = {name: action for name, parser in subcommands.choices.items() for action in parser._actions
               if "--output" in action.option_strings}
    assert set(outputs) == set(COMMANDS)
    assert all(action.type is flags.output_path for action in outputs.values())


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.usefixtures("no_rename")
def test_a_device_is_written_through(tree: Path, command: str) -> None:
    status, out, err = _run(command, "--output", "/dev/null")
    assert _succeeded(command, status) and out == "", err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_fifo_is_written_through(tree: Path, command: str) -> None:
    os.mkfifo(tree / "pipe")
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append((tree / "pipe").read_bytes()), daemon=True)
    reader.start()
    status, _, _ = _run(command, "--output", "pipe")
    reader.join(timeout=10)
    assert _succeeded(command, status) and stat.S_ISFIFO((tree / "pipe").lstat().st_mode)
    assert MARK[command] in received[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_symlink_stays_and_the_file_it_leads_to_is_replaced(tree: Path, command: str) -> None:
    (tree / "out").mkdir()
    (tree / "out" / "last.txt").write_text("old\n")
    (tree / "report.txt").symlink_to("out/last.txt")
    assert _succeeded(command, _run(command, "--output", "report.txt")[0])
    assert (tree / "report.txt").is_symlink() and os.readlink(tree / "report.txt") == "out/last.txt"
    assert MARK[command] in (tree / "out" / "last.txt").read_bytes()
    assert not list((tree / "out").glob(".*.tmp")) and not list(tree.glob(".*.tmp"))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_dangling_symlink_creates_the_file_it_names(tree: Path, command: str) -> None:
    (tree / "report.txt").symlink_to("new.txt")
    assert _succeeded(command, _run(command, "--output", "report.txt")[0])
    assert (tree / "report.txt").is_symlink() and MARK[command] in (tree / "new.txt").read_bytes()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_is_refused(tree: Path, command: str) -> None:
    (tree / "reports").mkdir()
    status, out, err = _run(command, "--output", "reports")
    assert (status, out) == (2, "") and err == "pinguard: error: reports: is a folder; --output takes a file name\n"
    assert list((tree / "reports").iterdir()) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_dash_is_stdout(tree: Path, command: str) -> None:
    status, out, _ = _run(command, "--output", "-")
    assert _succeeded(command, status) and MARK[command].decode() in out and not (tree / "-").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_path_that_cannot_be_written_is_one_line(tree: Path, command: str) -> None:
    status, _, err = _run(command, "--output", "missing/out.txt")
    assert status == 2 and err.startswith("pinguard: error: missing/out.txt: cannot write the ")
    assert len(err.splitlines()) == 1


# --- the export's header names the lockfile and the command that writes it again ---

@pytest.mark.parametrize("name", ["pin\nguard.lock", "a\rb\x1b[31m.lock", "x\u2028y\x85z.lock", "it's \\ here.lock",
                                  os.fsdecode(b"bad\xff.lock")])
def test_a_lockfile_path_with_control_characters_keeps_the_header_one_line_each(tree: Path, name: str) -> None:
    lockfile.write(Path(name), LOCK)
    status, out, err = _run("export", "--lockfile", name)
    assert (status, err) == (0, "")
    header = out.split("---\n", 1)[0]
    plain = _run("export")[1]  # the same lock at the default path: the same objects, as many header lines
    assert len(header.splitlines()) == len(plain.split("---\n", 1)[0].splitlines())
    assert all(line.startswith("# ") for line in header.splitlines())
    assert len(list(yaml.safe_load_all(out.encode("utf-8", "surrogateescape")))) == len(list(yaml.safe_load_all(plain)))
    command = header.splitlines()[1].split("`")[1]
    assert command.startswith("pinguard export admission --format vap --mode deny --lockfile ")
    # The command pastes back: the shell gives the path byte for byte.
    words = subprocess.run(["bash", "-c", f"printf '%s\\0' {command.removeprefix('pinguard ')}"],
                           capture_output=True, check=True).stdout.split(b"\0")[:-1]
    assert words[-1] == os.fsencode(name)


def test_a_plain_path_is_quoted_as_before(tree: Path) -> None:
    lockfile.write(tree / "my lock.toml", LOCK)
    out = _run("export", "--lockfile", "my lock.toml")[1]
    assert f"--lockfile {shlex.quote('my lock.toml')}` writes it." in out
