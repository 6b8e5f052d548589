"""The command line. Builds the parser from the commands' table and runs the command named.

Each command is a module of pinguard/commands/ that declares its name, help, flags, default
policy and `run(context)` (`commands.context.Command`); `COMMANDS` lists them, in the order
`--help` does: a new command is its module and its line here. A command's module is imported
only when that command runs (`--help`, and a first word that names none, load them all), so
the offline commands never pay for requests or the other heavy imports, nor for a policy none
asked for.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from pinguard import __version__
from pinguard.commands.context import Command, Context
from pinguard.commands.options import DEFAULT_LOCKFILE, Options
from pinguard.errors import PinguardError

# Every command, by the name typed; its module is pinguard/commands/ with `_` for `-` (post_render.py).
COMMANDS = ("resolve", "scan", "lock", "check", "pin", "verify", "update", "run", "export", "audit", "copy",
            "post-render")


def command(name: str) -> Command:
    """The command `name` as its module declares it."""
    declared: Command = importlib.import_module(f"pinguard.commands.{name.replace('-', '_')}").COMMAND
    return declared


class _Parser(argparse.ArgumentParser):
    """A parser that takes no abbreviation of a flag: `--res` is a typo, and a CI gate must fail on one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})


def parser(names: Sequence[str] = COMMANDS) -> argparse.ArgumentParser:
    """The parser of the commands `names`, each with the flags it declares."""
    front = _Parser(prog="pinguard", description="Pin container images to verified digests and keep them pinned.")
    front.add_argument("--version", action="version", version=f"pinguard {__version__}")
    subparsers = front.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for declared in map(command, names):
        subparser = subparsers.add_parser(declared.name, help=declared.help, description=declared.description,
                                          epilog=declared.epilog)
        declared.options(subparser)
    return front


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments, parsed. Where the first names a command, the parser holds that command alone: it parses
    what the whole one would, and only that command's module is loaded."""
    argv = sys.argv[1:] if argv is None else list(argv)
    return parser(argv[:1] if argv[:1] and argv[0] in COMMANDS else COMMANDS).parse_args(argv)


def _lockfile(args: argparse.Namespace, env: Mapping[str, str]) -> Path:
    """`--lockfile`; where it is not given and the environment may name it (`post-render`, which Helm runs
    wherever helm runs, often unflagged), PINGUARD_LOCKFILE, then the default."""
    lockfile: Path | None = getattr(args, "lockfile", DEFAULT_LOCKFILE)
    return Path(env.get("PINGUARD_LOCKFILE") or DEFAULT_LOCKFILE) if lockfile is None else lockfile


def main(argv: Sequence[str] | None = None, *, env: Mapping[str, str] | None = None,
         stdout: TextIO | None = None, stderr: TextIO | None = None, stdin: BinaryIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    args = _parse(argv)
    env = os.environ if env is None else env
    options = Options(out, err, env, _lockfile(args, env), args.quiet)
    with _request_log(err, on=bool(getattr(args, "verbose", None))):
        return _reported(Context(command(args.command), options, args, stdin))


@contextmanager
def _request_log(stream: TextIO, *, on: bool) -> Iterator[None]:
    """`-v`: the commands that reach registries log each request to `stream`, for this run only."""
    if not on:
        yield
        return
    import logging

    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("pinguard: %(message)s"))
    logger = logging.getLogger("pinguard")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def _reported(context: Context) -> int:
    """The command's status; an expected error printed, the only place errors are."""
    report = context.options.report
    try:
        return context.command.run(context)
    except PinguardError as exc:
        report.say(*exc.details)  # the failures first, then what came of them
        (report.say if exc.details else report.error)(str(exc))
        return 2
    except OSError as exc:  # a file or folder the user named that the system refuses: their input, not a bug
        report.error(f"{exc.filename or ''}: {exc.strerror or exc}")
        return 2
    except KeyboardInterrupt:
        return 130
