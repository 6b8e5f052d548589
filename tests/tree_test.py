"""The tests mirror the tree: `pinguard/<package>/<module>.py` is tested in `tests/<package>/<module>_test.py`.

A module at the top is tested in `tests/<module>_test.py`, each rule of `pinguard/policy/rules/` in a file
of its own. Flows across commands live in `tests/e2e/`, attacks in `tests/hostile/`, the tests of
`testing/` in `tests/testing/`. Two kinds of module need no file, each for the reason given.
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


def _test_file(module: Path) -> Path:
    relative = module.relative_to(PACKAGE)
    return TESTS.joinpath(*relative.parent.parts, f"{relative.stem}_test.py")


def _without_a_test_file() -> set[str]:
    modules = [path for path in PACKAGE.rglob("*.py") if path.name not in EXCEPTIONS]
    return {path.relative_to(PACKAGE.parent).as_posix() for path in modules if not _test_file(path).is_file()}


def test_the_test_file_of_a_module_mirrors_its_place() -> None:
    assert _test_file(PACKAGE / "reference.py") == TESTS / "reference_test.py"
    assert _test_file(PACKAGE / "policy" / "rules" / "unpinned.py") == TESTS / "policy" / "rules" / "unpinned_test.py"


def test_every_module_has_its_test_file() -> None:
    assert sorted(_without_a_test_file()) == []
