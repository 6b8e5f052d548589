"""The tests mirror the tree: `pinguard/<package>/<module>.py` is tested in `tests/<package>/<module>_test.py`.

A module at the top is tested in `tests/<module>_test.py`, each rule of `pinguard/policy/rules/` in a file
of its own. Flows across commands live in `tests/e2e/`, attacks in `tests/hostile/`, the tests of
`testing/` in `tests/testing/`. A few modules need no file, each for the reason given; the modules still
without one are listed, and the list only shrinks: a module that gets its file leaves it.
"""
from __future__ import annotations

from pathlib import Path

import pinguard

PACKAGE = Path(pinguard.__file__).parent
TESTS = Path(__file__).parent
# Modules that need no test file of their own, and why.
EXCEPTIONS = {
    "__init__.py": "a package's docstring alone (tests/layering_test.py holds that)",
    "__main__.py": "`python -m pinguard` calls cli.main: tests/cli_test.py runs it",
}
# Modules with no test file yet; where their tests are today, if anywhere. Only ever removed from.
STILL_WITHOUT = {
    "pinguard/commands/context.py": "tested through cli_test.py and every command's tests",
    "pinguard/commands/flags.py": "tested through cli_test.py and every command's tests",
    "pinguard/commands/options.py": "tested through cli_test.py and every command's tests",
}


def _test_file(module: Path) -> Path:
    relative = module.relative_to(PACKAGE)
    return TESTS.joinpath(*relative.parent.parts, f"{relative.stem}_test.py")


def _without_a_test_file() -> set[str]:
    modules = [path for path in PACKAGE.rglob("*.py") if path.name not in EXCEPTIONS]
    return {path.relative_to(PACKAGE.parent).as_posix() for path in modules if not _test_file(path).is_file()}


def test_the_test_file_of_a_module_mirrors_its_place() -> None:
    assert _test_file(PACKAGE / "reference.py") == TESTS / "reference_test.py"
    assert _test_file(PACKAGE / "policy" / "rules" / "unpinned.py") == TESTS / "policy" / "rules" / "unpinned_test.py"


def test_every_module_has_its_test_file_but_those_still_listed() -> None:
    assert sorted(_without_a_test_file() - set(STILL_WITHOUT)) == []


def test_the_list_of_modules_without_a_test_file_only_shrinks() -> None:
    """A module that got its test file, or is gone, leaves the list."""
    assert sorted(set(STILL_WITHOUT) - _without_a_test_file()) == []
