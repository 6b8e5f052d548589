"""Layers: only the command line reaches the commands, and the core never reaches up to either.

Commands only wire (parse, call the core, print); what two commands share lives in the core.
Imports are read from the source, lazy ones inside functions and `TYPE_CHECKING` blocks included.
What a run reads and caches is the run's, handed down; what the process holds is listed, with why.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

import pinguard
from pinguard import cli

PACKAGE = Path(pinguard.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))
# Below the commands and the command line: they never import either.
CORE = ("pinguard.registry", "pinguard.lock", "pinguard.write", "pinguard.read", "pinguard.resolve", "pinguard.policy",
        "pinguard.sources", "pinguard.helm", "pinguard.kustomize", "pinguard.provenance", "pinguard.admission",
        "pinguard.report", "pinguard.launch", "pinguard.copy", "pinguard.pin", "pinguard.scan", "pinguard.git")
# The floors, from the bottom (docs/architecture.md draws them): a module imports only from its own floor and below.
FLOORS = (
    ("errors", "clock", "progress", "untrusted_json", "untrusted_text", "reference", "uses", "findings"),  # records
    ("read", "sources", "write"),  # reading and writing files; every file kind's source
    ("registry", "git"),  # the OCI distribution client; refs of git repositories (GitHub Actions)
    ("provenance", "helm", "kustomize", "resolve"),  # who built an image; charts and builds judged; tags resolved
    ("scan",),  # every reference under some paths, each file by its source and tool
    ("lock",),  # the lockfile, kept in line and verified
    ("pin", "copy", "admission"),  # the engines that use the lock: pinning, copying, enforcing
    ("policy",),  # the rules, and the engines' settings they build
    ("report", "launch"),  # findings to a stream; `run`
    ("commands",),
    ("cli", "__main__"),
)
OPTIONS = "pinguard.commands.options"  # what the command line hands the commands
# The commands, as the command line lists them; the other modules of pinguard/commands are what they share.
COMMANDS = {f"pinguard.commands.{name.replace('-', '_')}" for name in cli.COMMANDS}
SHARED = sorted({f"pinguard.commands.{path.stem}" for path in (PACKAGE / "commands").glob("*.py")
                 if path.name != "__init__.py"} - COMMANDS)


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
    """A command is reached from the command line alone; what commands share is the command layer's other
    modules (`Options`, the context, the flags, the reporter, the write transaction), never another command."""
    assert OPTIONS in SHARED and "pinguard.commands.pin" in COMMANDS  # the check sees both kinds
    others = [path for path in MODULES if path != PACKAGE / "cli.py"]
    assert [_module(path) for path in others if any(
        _within(name, command) for command in COMMANDS for name in _imported(path))] == []


@pytest.mark.parametrize("shared", SHARED)
def test_what_the_commands_share_never_leaves_the_command_line_and_the_commands(shared: str) -> None:
    """The core takes what it uses (settings, a client, a stream), never the whole of what the command line says."""
    importers = _importers(shared, MODULES)
    assert [name for name in importers if name != "pinguard.cli" and not _within(name, "pinguard.commands")] == []
    if shared == OPTIONS:
        assert "pinguard.cli" in importers  # the check sees the one that must import it


@pytest.mark.parametrize("layer", ["pinguard.cli", "pinguard.commands"])
def test_the_core_imports_neither_commands_nor_command_line(layer: str) -> None:
    core = [path for path in MODULES if any(_within(_module(path), part) for part in CORE)]
    assert {_module(path) for path in core} >= set(CORE)  # every layer named is there to check
    assert _importers(layer, core) == []


def _package_imports() -> dict[tuple[str, str], list[str]]:
    """(importer, imported) package pairs of pinguard, each with the modules that make it: every import, lazy
    ones and `TYPE_CHECKING` ones included (an import hidden in a function still ties the packages)."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in MODULES:
        module = _module(path)
        if module == "pinguard":
            continue
        package = module.split(".")[1]
        for name in _imported(path):
            parts = name.split(".")
            if parts[0] != "pinguard" or len(parts) < 2 or parts[1] == package:
                continue
            if (PACKAGE / parts[1]).is_dir() or (PACKAGE / f"{parts[1]}.py").is_file():
                found.setdefault((package, parts[1]), []).append(module)
    return found


def _floor(package: str) -> int:
    [floor] = [number for number, packages in enumerate(FLOORS) if package in packages]
    return floor


def test_every_package_has_a_floor() -> None:
    packages = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in MODULES} - {"__init__"}
    assert sorted(packages - {p for floor in FLOORS for p in floor}) == []


def test_the_check_sees_every_package_import() -> None:
    imports = _package_imports()
    assert "pinguard.scan.paths" in imports["scan", "helm"]  # lazy ones too: the judge is imported when needed
    assert ("cli", "commands") in imports and ("commands", "cli") not in imports


def test_no_import_runs_up_a_floor() -> None:
    upward = [f"{importer} -> {imported} ({', '.join(sorted(set(modules)))})"
              for (importer, imported), modules in sorted(_package_imports().items())
              if _floor(imported) > _floor(importer)]
    assert upward == []


def test_no_two_packages_import_each_other() -> None:
    imports = _package_imports()
    assert sorted((a, b) for a, b in imports if (b, a) in imports) == []


# State a module holds for the whole process, outside any run, and why it must.
SHARED_STATE = {
    "pinguard.registry.cutoff: _WATCHDOG = _Watchdog()":
        "one thread aborts every request past its time limit, for the whole process: a thread a request would cost "
        "a thread switch each",
    "pinguard.registry.wire: @functools.lru_cache _origin":
        "a memo of a pure function, bounded (where an origin connects, parsed from its URL): it answers as the "
        "function would, whoever asks",
}
# Process-wide switches a module flips, restoring what it found, and why.
PROCESS_SWITCHES = {
    "pinguard.scan.paths: gc.disable()":
        "while a scan holds a file's parsed documents, the cyclic collector would trace every node of them again and "
        "again: three times the scan of a 10 MB file",
}
_MUTATORS = frozenset(("append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault", "add",
                       "discard", "sort", "reverse", "appendleft", "extendleft", "rotate", "move_to_end",
                       "difference_update", "intersection_update", "symmetric_difference_update"))
_CACHES = frozenset(("functools.cache", "functools.lru_cache"))
_SWITCHES = frozenset((
    "gc.disable", "gc.freeze", "gc.set_threshold", "os.umask", "os.chdir", "os.putenv", "os.unsetenv",
    "os.environ.update", "os.environ.setdefault", "os.environ.pop", "os.environ.clear", "warnings.filterwarnings",
    "warnings.simplefilter", "urllib3.disable_warnings", "sys.setrecursionlimit", "sys.setswitchinterval",
    "signal.signal", "socket.setdefaulttimeout", "logging.basicConfig", "locale.setlocale", "atexit.register"))


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Each name an import binds, anywhere in the module, and the dotted name it stands for."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update((alias.asname, alias.name) if alias.asname else (alias.name.partition(".")[0],) * 2
                           for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            aliases.update((alias.asname or alias.name, f"{node.module}.{alias.name}") for alias in node.names)
    return aliases


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, aliases)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _root(node: ast.expr) -> str | None:
    """The name an expression such as `a.b[c].d` starts from."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _bound(statements: Iterable[ast.AST]) -> set[str]:
    """The names these statements bind in their own scope: not in the functions and classes they define."""
    names: set[str] = set()
    pending = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        if not isinstance(node, ast.Lambda):
            pending.extend(ast.iter_child_nodes(node))
    return names


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    return {argument.arg for argument in every if argument is not None}


def _mutable_instances(tree: ast.Module) -> list[str]:
    """Module-level instances of the module's own classes, but for records that cannot change."""
    def changes(node: ast.ClassDef) -> bool:
        frozen = any(isinstance(decorator, ast.Call) and any(
            keyword.arg == "frozen" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True
            for keyword in decorator.keywords) for decorator in node.decorator_list)
        return not frozen and not any(ast.unparse(base).endswith(("NamedTuple", "Enum")) for base in node.bases)
    mutable = {node.name for node in tree.body if isinstance(node, ast.ClassDef) and changes(node)}
    return [f"{ast.unparse(target)} = {ast.unparse(node.value)}" for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id in mutable
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])]


def _held_state(source: str) -> set[str]:
    """What a module holds for the process: its names that functions change (`NAME[k] = v`, `NAME.add(x)`,
    `global NAME`), instances of its own mutable classes, module-level caches; and the process-wide
    switches it flips (`gc.disable()`, `os.umask(0)`, ...)."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    module_names = _bound(node for node in tree.body if not isinstance(
        node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))) - set(aliases)  # a module is no state of its own
    held = set(_mutable_instances(tree))

    def visit(node: ast.AST, local: frozenset[str], in_function: bool) -> None:
        if isinstance(node, ast.Global):
            held.update(f"global {name}" for name in node.names)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not in_function:
            held.update(f"@{_dotted(getattr(decorator, 'func', decorator), aliases)} {node.name}"
                        for decorator in node.decorator_list
                        if _dotted(getattr(decorator, "func", decorator), aliases) in _CACHES)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = [node.body] if isinstance(node, ast.Lambda) else node.body
            local, in_function = local | _parameters(node) | _bound(body), True
        if isinstance(node, ast.Call) and _dotted(node.func, aliases) in _SWITCHES:
            held.add(f"{_dotted(node.func, aliases)}()")
        changed: ast.expr | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            changed = node.func.value
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            changed = node.value
            if _dotted(changed, aliases) == "os.environ":
                held.add("os.environ[...] =")
        name = _root(changed) if changed is not None else None
        if in_function and name in module_names and name not in local:
            held.add(name)
        for child in ast.iter_child_nodes(node):
            visit(child, local, in_function)

    visit(tree, frozenset(), False)
    return held


@pytest.mark.parametrize(("source", "held"), [
    ("_seen = {}\ndef f(key):\n    _seen[key] = 1\n", {"_seen"}),
    ("_seen: list[int] = []\ndef f():\n    _seen.append(1)\n", {"_seen"}),
    ("_seen = set()\nclass C:\n    def f(self):\n        _seen.add(self)\n", {"_seen"}),
    ("_n = 0\ndef f():\n    global _n\n    _n += 1\n", {"global _n"}),
    ("import functools\n@functools.lru_cache(maxsize=None)\ndef f(x):\n    return x\n", {"@functools.lru_cache f"}),
    ("from functools import cache\nclass C:\n    @cache\n    def f(self):\n        return 1\n", {"@functools.cache f"}),
    ("class _W:\n    pass\n_ONE = _W()\n", {"_ONE = _W()"}),
    ("import gc as g\ndef f():\n    g.disable()\n", {"gc.disable()"}),
    ("from os import umask\nmask = umask(0)\n", {"os.umask()"}),
    ("import os\ndef f():\n    os.environ['A'] = '1'\n", {"os.environ[...] ="}),
    # Not state: built once at import, a local of the same name, records that cannot change, a cache in a call.
    ("TABLE = {}\nfor k in 'ab':\n    TABLE[k] = k\ndef f(TABLE):\n    TABLE.clear()\n", set()),
    ("_seen = []\ndef f():\n    _seen = []\n    _seen.append(1)\n", set()),
    ("from typing import NamedTuple\nclass R(NamedTuple):\n    a: int\nONE = R(1)\n", set()),
    ("from dataclasses import dataclass\n@dataclass(frozen=True)\nclass R:\n    a: int\nONE = R(1)\n", set()),
    ("from functools import cache\ndef f(xs):\n    @cache\n    def g(x):\n        return x\n    return g\n", set()),
])
def test_the_state_check_sees_what_a_module_holds(source: str, held: set[str]) -> None:
    assert _held_state(source) == held


def test_no_module_holds_state_for_the_process_but_those_allowed() -> None:
    """A run owns what it reads and caches and hands it on; what the process holds is listed above, with why."""
    held = {f"{_module(path)}: {item}" for path in MODULES for item in _held_state(path.read_text(encoding="utf-8"))}
    assert held == set(SHARED_STATE) | set(PROCESS_SWITCHES)


def test_package_init_files_hold_only_their_docstring() -> None:
    """A package's `__init__.py` says what the package is; its code lives in modules named for what they do."""
    holding_code = []
    for path in PACKAGE.rglob("__init__.py"):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        statements = [node for node in body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
                      and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
        if path.parent == PACKAGE:  # the package's version, read by packaging and `--version`
            statements = [node for node in statements if not (
                isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__version__"])]
        if statements:
            holding_code.append(_module(path))
    assert holding_code == []


# Where pinguard speaks to the terminal: the command line and the commands (through their reporter), and the
# report formats, which write findings to the stream they are handed. The engines below hand lines up.
SPEAKERS = ("pinguard.cli", "pinguard.__main__", "pinguard.commands", "pinguard.report")
_STANDARD_STREAMS = frozenset(("sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__"))


def _speaking(source: str) -> list[str]:
    """Each `print(` a module calls and each standard stream it names, however imported."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _dotted(node.func, aliases) in ("print", "builtins.print"):
            found.append(f"{node.lineno}: print(")
        elif isinstance(node, (ast.Name, ast.Attribute)) and _dotted(node, aliases) in _STANDARD_STREAMS:
            found.append(f"{node.lineno}: {_dotted(node, aliases)}")
    return found


@pytest.mark.parametrize(("source", "found"), [
    ("print('x', file=stream)\n", ["1: print("]),
    ("import sys\nsys.stderr.write('x')\n", ["2: sys.stderr"]),
    ("from sys import stdout as out\nout.flush()\n", ["2: sys.stdout"]),
    ("import sys\ndef f(stream=sys.__stderr__):\n    pass\n", ["2: sys.__stderr__"]),
    # Not speaking: a stream handed in, the interpreter's path, a method of the same name.
    ("import sys\ndef f(stream):\n    stream.write(sys.executable)\n    job.print()\n", []),
])
def test_the_speaking_check_sees_every_form(source: str, found: list[str]) -> None:
    assert _speaking(source) == found


def test_only_the_command_line_the_commands_and_the_report_speak() -> None:
    """The engines say what they have to say through what the command hands them (lines returned, or its
    reporter's callables), so every line on stderr is said the one way and `-q` silences what it should."""
    engines = [path for path in MODULES if not any(_within(_module(path), speaker) for speaker in SPEAKERS)]
    assert {_module(path) for path in engines} >= {"pinguard.launch.cluster", "pinguard.launch.local"}
    assert {_module(path): found for path in engines if (found := _speaking(path.read_text(encoding="utf-8")))} == {}
