"""Online settings draw progress only on a terminal, and clear the line they drew."""

from __future__ import annotations

import io

import pytest

from pinguard.registry.manifest import Platform
from pinguard.registry.settings import RegistrySettings
from pinguard.resolve.settings import OnlineSettings

AMD64 = (Platform("linux", "amd64"),)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_drawn_without_a_stream() -> None:
    with OnlineSettings(RegistrySettings(), AMD64).progress_line(["ghcr.io"], lambda _: "", "references") as done:
        assert done is None


def test_nothing_is_drawn_on_a_stream_that_is_not_a_terminal() -> None:
    stream = io.StringIO()
    settings = OnlineSettings(RegistrySettings(), AMD64, progress=stream)
    with settings.progress_line(["ghcr.io"], lambda _: "", "references") as done:
        assert done is None
    assert stream.getvalue() == ""


def test_progress_on_a_terminal_counts_each_registry_and_is_cleared() -> None:
    terminal = Terminal()
    settings = OnlineSettings(RegistrySettings(), AMD64, progress=terminal)
    with settings.progress_line(["ghcr.io", "ghcr.io", "docker.io"], lambda _: "not held back", "images") as done:
        assert done is not None
        done("ghcr.io")
    drawn = terminal.getvalue()
    assert "ghcr.io: 1/2 images; docker.io: 0/1 images" in drawn
    assert drawn.endswith("\r\x1b[K")


def test_the_line_is_cleared_when_the_work_fails() -> None:
    terminal = Terminal()
    settings = OnlineSettings(RegistrySettings(), AMD64, progress=terminal)
    with pytest.raises(KeyError), settings.progress_line(["ghcr.io"], lambda _: "", "references"):
        raise KeyError("stopped")
    assert terminal.getvalue().endswith("\r\x1b[K")
