"""What every source returns, and what a policy tells the sources."""
from __future__ import annotations

from dataclasses import fields

from pinguard.sources.base import Found, SourceError, SourceSettings, Span, Unreadable


def test_a_reference_is_where_its_span_starts() -> None:
    found = Found("pod.yaml", "kubernetes", Span(40, 50, 4, 14), "nginx:1.25", None, "why")
    assert (found.line, found.column) == (4, 14)


def test_a_source_error_shows_what_it_quotes_cut_and_escaped() -> None:
    error = SourceError("invalid YAML: found '\x1b[2J" + "x" * 5000 + "'", 3, 7)
    assert (error.line, error.column) == (3, 7)
    assert "\x1b" not in str(error) and "\\x1b[2J" in str(error) and len(str(error)) < 4200
    assert isinstance(Unreadable("YAML nested too deeply to read", 1, 1), SourceError)


def test_helm_is_no_part_of_what_the_sources_are_told() -> None:
    """Helm's settings, and the charts a scan has read, are Helm's: `HelmSettings`, and the scan's `HelmReader`."""
    assert {item.name for item in fields(SourceSettings)} == {"reader"}
