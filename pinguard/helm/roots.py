"""Which chart a file belongs to, from the Chart.yaml files above it: no Helm, nothing rendered.

A scan asks this of every file, so it lives apart from the judging (`judge.py`), which is
imported only when a file lies in a chart.
"""
from __future__ import annotations

import os
from pathlib import Path

_SEARCHED_UP = 16  # folders above a file looked at for a Chart.yaml


class ChartRoots:
    """Each folder's chart, looked up once a run: the files of one folder share it."""

    def __init__(self) -> None:
        self._roots: dict[Path, Path | None] = {}

    def of(self, path: Path) -> Path | None:
        if path.parent not in self._roots:
            self._roots[path.parent] = outermost_chart(path)
        return self._roots[path.parent]


def outermost_chart(path: Path) -> Path | None:
    """The chart a file belongs to: the outermost folder above it holding a Chart.yaml (a subchart's
    files belong to the chart that vendors it), spelled relative to the current folder when below it."""
    found = None
    folder = path.resolve().parent
    for _ in range(_SEARCHED_UP):
        if (folder / "Chart.yaml").is_file():
            found = folder
        if folder.parent == folder:
            break
        folder = folder.parent
    if found is None:
        return None
    return Path(os.path.relpath(found)) if found.is_relative_to(Path.cwd()) else found
