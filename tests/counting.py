"""Work counted in characters examined, for the tests that hold a piece of work linear in its input.

Growth is judged between two input sizes, never by time: a linear reader examines four
times the characters for four times the input, a quadratic one sixteen.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import SupportsIndex


def _length(text: str, start: SupportsIndex | None, end: SupportsIndex | None) -> int:
    return len(range(*slice(start, end).indices(len(text))))


class CountingText(str):
    """A text whose searches (`count`, `find`, `rfind`) add the characters they cover to `examined`."""

    examined = 0

    def count(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        self.examined += _length(self, start, end)
        return super().count(sub, start, end)

    def find(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        self.examined += _length(self, start, end)
        return super().find(sub, start, end)

    def rfind(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        self.examined += _length(self, start, end)
        return super().rfind(sub, start, end)


class CountingPattern:
    """A compiled pattern that adds the characters each search is handed to `examined`."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.examined = 0

    def _cover(self, text: str, pos: int, endpos: int) -> None:
        self.examined += max(0, min(endpos, len(text)) - pos)

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        self._cover(text, pos, endpos)
        return self.pattern.search(text, pos, endpos)

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        self._cover(text, pos, endpos)
        return self.pattern.match(text, pos, endpos)

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        self._cover(text, pos, endpos)
        return self.pattern.finditer(text, pos, endpos)
