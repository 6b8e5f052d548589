"""What the command line hands every command, and the defaults of its flags.

The registry flags' defaults (-j, --timeout) are `RegistrySettings`'s own.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from pinguard.commands.reporter import Reporter

DEFAULT_LOCKFILE = Path("pinguard.lock")
DEFAULT_PLATFORM = "linux/amd64"  # what the images must offer when no --platform is given
DEFAULT_WATCH = 3600.0  # seconds `run` watches a job before it gives up (--watch-timeout)


@dataclass(frozen=True)
class Options:
    """What every command is given besides its own arguments: where to write, the environment, the lockfile."""

    stdout: TextIO
    stderr: TextIO
    env: Mapping[str, str] = field(default_factory=dict)
    lockfile: Path = DEFAULT_LOCKFILE
    quiet: bool = False

    @property
    def report(self) -> Reporter:
        """Errors, warnings and notes on stderr, said the one way."""
        return Reporter(self.stderr)
