"""What every source's findings must satisfy, whatever the kind."""
from __future__ import annotations

from pinguard.reference import parse
from pinguard.sources.base import Found


def check_spans(text: str, found: list[Found]) -> None:
    """Each value is exactly its span's text, at the line and column given, in file order."""
    assert [item.span.start for item in found] == sorted(item.span.start for item in found)
    for item in found:
        assert text[item.span.start : item.span.end] == item.value
        line_start = text.rfind("\n", 0, item.span.start) + 1
        assert (item.line, item.column) == (text.count("\n", 0, item.span.start) + 1, item.span.start - line_start + 1)
        assert (item.reference is None) == (item.problem is not None)
        if item.reference is not None:
            assert parse(item.value) == item.reference
