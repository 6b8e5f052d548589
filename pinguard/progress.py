"""One line of progress on a terminal while the online commands wait on registries.

    public.ecr.aws: 12/40 references, held to 1 request/s (anonymous: AWS credentials raise ...)

It is redrawn in place as references are done, from one thread, and cleared at
the end; when the stream is not a terminal, or with -q, there is none at all.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TextIO

Describe = Callable[[str], "str | None"]  # a registry's pace, or None while it has not been reached


class Progress:
    def __init__(self, stream: TextIO, registries: Iterable[str], describe: Describe, noun: str) -> None:
        self._stream = stream
        self._describe = describe
        self._noun = noun
        self._total = Counter(registries)
        self._done: Counter[str] = Counter()
        try:  # the width of this stream's terminal: stdout may well be a file
            columns = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError):  # no descriptor (io.UnsupportedOperation is both)
            columns = 80
        self._width = columns - 1  # a line that wraps could not be redrawn in place

    @classmethod
    def on_terminal(cls, stream: TextIO, quiet: bool, registries: Iterable[str], describe: Describe,
                    noun: str = "references") -> Progress | None:
        if quiet or not stream.isatty():
            return None
        progress = cls(stream, registries, describe, noun)
        progress._draw()
        return progress

    def done(self, registry: str) -> None:
        self._done[registry] += 1
        self._draw()

    def _draw(self) -> None:
        parts = []
        for registry, total in self._total.items():
            pace = self._describe(registry)
            held = f", {pace}" if pace and pace != "not held back" else ""
            parts.append(f"{registry}: {self._done[registry]}/{total} {self._noun}{held}")
        self._stream.write("\r\x1b[K" + "; ".join(parts)[:self._width])
        self._stream.flush()

    def clear(self) -> None:
        self._stream.write("\r\x1b[K")
        self._stream.flush()
