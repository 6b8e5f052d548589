"""Pinning a chart's values files, written only where Helm confirms it.

Each image to pin has its placements, best first (placements.py). All images' first placements
are rendered together, once; where the render disagrees, the set is halved until
the images it disagrees about are found, and those try their next placement.
An image no placement pins is reported with what the render showed: the chart
cannot carry a digest through its values, and `pinguard post-render` can pin it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pinguard.errors import PinguardError
from pinguard.helm.binary import RenderFailed
from pinguard.helm.confirm import compare
from pinguard.helm.judge import JudgedChart
from pinguard.helm.placements import Placement, placements
from pinguard.sources.base import Found
from pinguard.write.edits import Edit, apply
from pinguard.write.placing import Item, Search

CANNOT = "this chart cannot carry a digest through its values"
POST_RENDER = "pin it at deploy time with `pinguard post-render`"


@dataclass
class ChartPlan:
    texts: dict[Path, str]  # new texts by resolved path, of files that change
    refused: list[tuple[Found, str]]  # what could not be pinned, and what the render showed


def plan_chart(chart: JudgedChart, wanted: Sequence[tuple[Found, str]]) -> ChartPlan:
    """Confirmed edits pinning each (found, locked digest) of one chart; the others refused with a reason."""
    refused: list[tuple[Found, str]] = []
    items: list[Item[Placement]] = []
    for found, digest in wanted:
        use = chart.uses.get(found.rendered or "")
        if found.fixed is not None or use is None or use.trace is None:
            refused.append((found, found.fixed or found.unrendered or "no values line controls it"))
            continue
        candidates = tuple(p for p in placements(use.trace, use.image, digest) if p.edits)
        if not candidates:
            refused.append((found, f"{CANNOT}: its values line is not a plain or quoted value pinguard can edit"))
            continue
        items.append(Item(found, use.image, digest, candidates))
    confirmer = _Confirmer(chart)
    accepted, failed = confirmer.settle_all(items)
    refused.extend((item.found, f"{CANNOT}: {reason}") for item, reason in failed)
    return ChartPlan(confirmer.texts(accepted) if accepted else {}, refused)


class _Confirmer(Search[Placement]):
    def __init__(self, chart: JudgedChart) -> None:
        super().__init__()
        self._chart = chart

    def texts(self, items: list[Item[Placement]]) -> dict[Path, str]:
        edits: dict[Path, list[Edit]] = {}
        for item in items:
            for path, edit in self.placement(item).edits:
                edits.setdefault(path, []).append(edit)
        return {path: apply(self._text(path), file_edits) for path, file_edits in edits.items()}

    def _text(self, path: Path) -> str:
        if path not in self._chart.texts:
            raise PinguardError(f"{path}: not a values file of {self._chart.root}")
        return self._chart.texts[path]

    def verdict(self, items: list[Item[Placement]]) -> str | None:
        """None when rendering with these items' edits changes exactly their images; else what it showed."""
        try:
            edited = self.texts(items)
        except PinguardError as exc:  # two images want one value to say different things
            return f"two images share the value it would be written in ({exc})"
        pins = {item.image: item.digest for item in items}
        shown_pinned: set[str] = set()
        for deployment in self._chart.deployments:
            try:
                before = self._chart.renderer.render(deployment)
                after = self._chart.renderer.render(deployment, edited)
            except RenderFailed as exc:
                return f"helm template fails once it is written: {exc}"
            comparison = compare(before, after, pins)
            if comparison.unexplained:
                return "; ".join(comparison.unexplained[:3])
            shown_pinned |= comparison.pinned
        unshown = [image for image in pins if image not in shown_pinned]
        if unshown:
            return f"the render does not carry the digest: {unshown[0]} still renders unpinned"
        return None
