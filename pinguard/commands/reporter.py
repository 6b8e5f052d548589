"""The one way the commands speak on stderr: `pinguard: ` before every line, then `error: ` or `warning: `
where the line is one.

The engines return what went wrong as records and lines, never printing; the commands hand
those lines here. A line that names its own place (`file:line:column: ...`) or says what
was done goes as it is (`say`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO


@dataclass(frozen=True)
class Reporter:
    stream: TextIO

    def error(self, *messages: str) -> None:
        self.say(*(f"error: {message}" for message in messages))

    def warning(self, *messages: str) -> None:
        self.say(*(f"warning: {message}" for message in messages))

    def say(self, *messages: str) -> None:
        for message in messages:
            # flushed: said before anything a process started next writes to the same stream (`run --local`)
            print(f"pinguard: {message}", file=self.stream, flush=True)
