"""One line of progress, redrawn in place on a terminal, never written elsewhere."""
from __future__ import annotations

import io

from pinguard.progress import Progress

PACES = {"public.ecr.aws": "held to 1 request/s", "ghcr.io": "not held back"}


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_progress_off_a_terminal_or_when_quiet() -> None:
    assert Progress.on_terminal(io.StringIO(), False, ["ghcr.io"], PACES.get) is None
    terminal = _Terminal()
    assert Progress.on_terminal(terminal, True, ["ghcr.io"], PACES.get) is None
    assert terminal.getvalue() == ""


def test_each_registry_counts_its_references_and_says_how_it_is_held_back() -> None:
    terminal = _Terminal()
    progress = Progress.on_terminal(terminal, False, ["public.ecr.aws", "ghcr.io", "public.ecr.aws"], PACES.get)
    assert progress is not None
    progress.done("public.ecr.aws")
    progress.done("ghcr.io")
    drawn = terminal.getvalue().split("\r\x1b[K")  # each line erases the one before
    assert drawn[1:] == ["public.ecr.aws: 0/2 references, held to 1 request/s; ghcr.io: 0/1 references",
                         "public.ecr.aws: 1/2 references, held to 1 request/s; ghcr.io: 0/1 references",
                         "public.ecr.aws: 1/2 references, held to 1 request/s; ghcr.io: 1/1 references"]
    progress.clear()
    assert terminal.getvalue().endswith("\r\x1b[K")


def test_the_line_never_wraps_so_it_can_be_redrawn() -> None:
    terminal = _Terminal()  # no descriptor to ask its width: 80 columns
    progress = Progress.on_terminal(terminal, False, [f"registry-{n}.example" for n in range(20)], PACES.get,
                                    noun="entries")
    assert progress is not None
    line = terminal.getvalue().removeprefix("\r\x1b[K")
    assert len(line) == 79 and line.startswith("registry-0.example: 0/1 entries; registry-1.example")
