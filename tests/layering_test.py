"""Layers: only the command line reaches the commands, and the core never reaches up to either.

Commands only wire (parse, call the core, print); what two commands share lives in the core.
Imports are read from the source, lazy ones inside functions and `TYPE_CHECKING` blocks included.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

import pinguard

PACKAGE = Path(pinguard.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))
# Below the commands and the command line: they never import either.
CORE = ("pinguard.registry", "pinguard.lock", "pinguard.write", "pinguard.read", "pinguard.resolve", "pinguard.policy",
        "pinguard.sources", "pinguard.helm", "pinguard.provenance", "pinguard.admission", "pinguard.report")


def _module(path: Path) -> str:
    return ".".join(("pinguard", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")


def _imports(source: str, package: str) -> set[str]:
    """Every module `source` imports, relative names made absolute; `from a import b` counts as a and a.b."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[:len(parts) - node.level + 1], *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _imported(path: Path) -> set[str]:
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    return _imports(path.read_text(encoding="utf-8"), package)


def _within(name: str, layer: str) -> bool:
    return name == layer or name.startswith(layer + ".")


def _importers(layer: str, paths: Iterable[Path]) -> list[str]:
    return [_module(path) for path in paths if any(_within(name, layer) for name in _imported(path))]


def test_the_check_sees_every_form_of_import() -> None:
    source = ("import pinguard.commands.pin\nfrom pinguard import cli\nfrom . import lockfile\n"
              "def run() -> None:\n    from ..commands.lock import lock\n")
    assert _imports(source, "pinguard.launch") >= {
        "pinguard.commands.pin", "pinguard.cli", "pinguard.launch.lockfile", "pinguard.commands.lock.lock"}


def test_only_the_command_line_imports_the_commands() -> None:
    assert _importers("pinguard.commands", (path for path in MODULES if path != PACKAGE / "cli.py")) == []


@pytest.mark.parametrize("layer", ["pinguard.cli", "pinguard.commands"])
def test_the_core_imports_neither_commands_nor_command_line(layer: str) -> None:
    core = [path for path in MODULES if any(_within(_module(path), part) for part in CORE)]
    assert {_module(path) for path in core} >= set(CORE)  # every layer named is there to check
    assert _importers(layer, core) == []
