"""The layout in docs/architecture.md names every module of the package, and only modules that exist."""
from __future__ import annotations

import re
from pathlib import Path

import pinguard

PACKAGE = Path(pinguard.__file__).parent
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
_NAME = re.compile(r"[\w.-]+(?:\.py|/)")


def _layout_block() -> list[str]:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("\n## Layout\n"):]
    return section[section.index("```\n") + 4:section.index("\n```", section.index("```\n") + 4)].splitlines()


def named_in_layout() -> set[str]:
    """Paths under pinguard/ the layout names: one level of indent is two spaces; a line starts with
    names ending in `.py` or `/`, and whatever follows them describes them."""
    named: set[str] = set()
    folders: list[tuple[int, str]] = []  # (indent, path) of the folders open above the current line
    for line in _layout_block():
        indent = len(line) - len(line.lstrip(" "))
        folders = [(depth, path) for depth, path in folders if depth < indent]
        parent = folders[-1][1] if folders else ""
        for word in line.split():
            if not _NAME.fullmatch(word):
                break
            path = parent + word
            named.add(path)
            if word.endswith("/"):
                folders.append((indent, path))
    return {path for path in named if path.startswith("pinguard/")}


def test_the_layout_names_every_module_and_package() -> None:
    modules = {f"pinguard/{path.relative_to(PACKAGE).as_posix()}" for path in PACKAGE.rglob("*.py")
               if path.name != "__init__.py"}
    packages = {f"pinguard/{path.parent.relative_to(PACKAGE).as_posix()}/" for path in PACKAGE.rglob("__init__.py")
                if path.parent != PACKAGE}
    named = named_in_layout()
    assert sorted((modules | packages) - named) == []
    assert sorted(named - modules - packages - {"pinguard/", "pinguard/policies/"}) == []


def test_the_layout_reader_follows_indentation() -> None:
    assert named_in_layout() >= {"pinguard/registry/pacer.py", "pinguard/policy/rules/unpinned.py",
                                 "pinguard/commands/verify.py"}
