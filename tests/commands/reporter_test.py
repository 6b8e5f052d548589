"""The reporter: every line the commands say on stderr is said one way, and said only there."""
from __future__ import annotations

import ast
import io
from pathlib import Path

import pinguard
from pinguard.commands.reporter import Reporter

PACKAGE = Path(pinguard.__file__).parent


def test_errors_warnings_and_notes_each_get_their_prefix_a_line_each() -> None:
    err = io.StringIO()
    report = Reporter(err)
    report.error("--jobs must be at least 1")
    report.warning("one", "two")
    report.say("pod.yaml:3:12: busybox:1.36 is not in pinguard.lock")
    report.warning()  # nothing to say: nothing said
    assert err.getvalue().splitlines() == ["pinguard: error: --jobs must be at least 1", "pinguard: warning: one",
                                           "pinguard: warning: two",
                                           "pinguard: pod.yaml:3:12: busybox:1.36 is not in pinguard.lock"]


def _prefixed(path: Path) -> set[str]:
    """The string literals (f-strings by their first part) of a module that start a `pinguard: ` line."""
    return {node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("pinguard: ")}


def test_no_command_prefixes_a_line_itself() -> None:
    """A command hands its errors and warnings to the reporter; none prints `pinguard: ...` on its own."""
    modules = [*sorted((PACKAGE / "commands").glob("*.py")), PACKAGE / "cli.py"]
    prefixed = {path.name: said for path in modules if (said := _prefixed(path))}
    assert prefixed == {"reporter.py": {"pinguard: "}, "cli.py": {"pinguard: %(message)s"}}  # -v's request log
