"""Pinning a chart's values files, written only where Helm confirms it.

Each image to pin has its placements, best first (placements.py). All images' first placements
are rendered together, once; where the render disagrees, the set is halved until
the images it disagrees about are found, and those try their next placement.
An image no placement pins is reported with what the render showed: the chart
cannot carry a digest through its values, and `pinguard post-render` can pin it.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pinguard.errors import PinguardError
from pinguard.helm.binary import RenderFailed
from pinguard.helm.confirm import Change, Comparison, Noise, Render, compare
from pinguard.helm.judge import JudgedChart
from pinguard.helm.overrides import overrides
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
        overridden = overrides(chart, found, use.trace, use.image, digest)  # a pulled chart's values: never written
        candidates = tuple(p for p in (placements(use.trace, use.image, digest) if overridden is None else overridden)
                           if p.edits)
        if not candidates:
            refused.append((found, f"{CANNOT}: its values line is not a plain or quoted value pinguard can edit"))
            continue
        items.append(Item(found, use.image, digest, candidates))
    with _Confirmer(chart, {item.image for item in items}) as confirmer:
        accepted, failed = confirmer.settle_all(items)
        accepted += _every_occurrence(chart, confirmer, accepted, [item for item, _ in failed])
        texts = confirmer.texts(accepted) if accepted else {}
        still = dict(confirmer.unpinned)
    pinned = {item.image for item in accepted}
    for item, reason in failed:
        if item.image in still or item.image not in pinned:
            refused.append((item.found, f"{CANNOT}: {reason}"))
            still.pop(item.image, None)
    for item in accepted:
        if item.image in still:
            refused.append((item.found, f"{CANNOT} everywhere: {still.pop(item.image)} of the places it renders "
                                        "still show it unpinned, and no other values line that prints it takes the "
                                        "digest"))
    return ChartPlan(texts, refused)


def _every_occurrence(chart: JudgedChart, confirmer: _Confirmer, accepted: list[Item[Placement]],
                      failed: list[Item[Placement]]) -> list[Item[Placement]]:
    """An image some render still shows unpinned once `accepted` are written (two blocks render it, or its
    likeliest block did not take the digest) tries the other blocks that print it, one a round, each kept only
    where it pins more of its places."""
    found = {item.image: item for item in [*failed, *accepted]}
    left = {image: list(chart.uses[image].alternates[:_ALTERNATES]) for image in found if image in chart.uses}
    added: list[Item[Placement]] = []
    while True:
        retried = [Item(found[image].found, image, found[image].digest, candidates)
                   for image in confirmer.unpinned if left.get(image)
                   if (candidates := tuple(p for p in placements(left[image].pop(0), image, found[image].digest)
                                           if p.edits))]
        if not retried:
            return added
        confirmer.expect_fewer(image for image in confirmer.unpinned)
        more, _ = confirmer.settle_all(retried, [*accepted, *added])
        added += more


_ALTERNATES = 8  # other blocks tried for one image


@dataclass
class _Baseline:
    """Renders of one deployment's unchanged input: the first, and what varies between them."""

    render: Render
    noise: Noise
    samples: int


class _Confirmer(Search[Placement]):
    """Renders with the items' edits, every deployment at once, against two renders of the unchanged chart."""

    def __init__(self, chart: JudgedChart, watched: set[str]) -> None:
        super().__init__()
        self._chart = chart
        self._watched = watched  # the images to pin: their places left unpinned are counted in every verdict
        self._pool = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1))
        self._baselines: dict[int, _Baseline] = {}
        self._fewer: dict[str, int] = {}  # images retried from another block: the places left unpinned before
        self._last = _Verdict()
        self.unpinned: dict[str, int] = {}  # by image, its places still unpinned once the last confirmed are written
        self._unchanged: dict[str, int] = {}  # by image, its places in the unchanged renders
        self._confirmed = False  # whether a verdict confirmed some placements yet

    def __enter__(self) -> _Confirmer:
        return self

    def __exit__(self, *_: object) -> None:
        self._pool.shutdown()

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

    def expect_fewer(self, images: Iterable[str]) -> None:
        """From now on, these images pass only where fewer of their places render unpinned than now."""
        self._fewer = {image: self.unpinned[image] for image in images}

    def verdict(self, items: list[Item[Placement]]) -> str | None:
        """None when rendering with these items' edits changes exactly their images; else what it showed."""
        self._last = _Verdict()
        try:
            edited = self.texts(items)
        except PinguardError as exc:  # two images want one value to say different things
            return f"two images share the value it would be written in ({exc})"
        pins = {item.image: item.digest for item in items}
        indexes = range(len(self._chart.deployments))
        # Every render this verdict needs at once: each deployment's with the edits, and its baseline's.
        afters = [self._pool.submit(self._chart.renderer.render, self._chart.deployments[index], edited)
                  for index in indexes]
        try:
            self._baselines_made()
            comparisons = [self._compare(index, after.result(), pins) for index, after in zip(indexes, afters,
                                                                                               strict=True)]
        except RenderFailed as exc:
            return f"helm template fails once it is written: {exc}"
        unpinned: dict[str, int] = {}
        for comparison in comparisons:
            self._last.changes.extend(comparison.changes)
            self._last.pinned |= comparison.pinned
            for image, count in comparison.unpinned.items():
                unpinned[image] = unpinned.get(image, 0) + count
        if self._last.changes:
            return "; ".join(change.text for change in self._last.changes[:3])
        self._last.unshown = [image for image in pins if not self._shown(image, unpinned)]
        if self._last.unshown:
            return f"the render does not carry the digest: {self._last.unshown[0]} still renders unpinned"
        self.unpinned = unpinned
        self._confirmed = True
        return None

    def _shown(self, image: str, unpinned: dict[str, int]) -> bool:
        if image in self._fewer:
            return unpinned.get(image, 0) < self._fewer[image]
        return image in self._last.pinned

    def culprits(self, items: list[Item[Placement]]) -> dict[Item[Placement], str] | None:
        """The items the last verdict's changes name: by the digest a change newly shows, by the image left
        unpinned; None where a change names none of them, or more than one, or one whose own image was changed."""
        noise = next((change.text for change in self._last.changes if change.noise), None)
        if noise is not None:
            return dict.fromkeys(items, noise)
        by_digest: dict[str, list[Item[Placement]]] = {}
        by_image: dict[str, list[Item[Placement]]] = {}
        for item in items:
            by_digest.setdefault(item.digest, []).append(item)
            by_image.setdefault(item.image, []).append(item)
        named = [(change.text, [item for digest in change.digests for item in by_digest.get(digest, ())])
                 for change in self._last.changes]
        named += [(f"the render does not carry the digest: {image} still renders unpinned", by_image.get(image, []))
                  for image in self._last.unshown]
        blamed: dict[Item[Placement], str] = {}
        for text, at_fault in named:
            if len(at_fault) != 1:
                return None
            blamed.setdefault(at_fault[0], text)
        victims = [text for text, _ in named]  # two that spoil each other's image: halving keeps one of them
        if not blamed or any(item.image in text for item in blamed for text in victims if text != blamed[item]):
            return None
        return blamed

    def _compare(self, index: int, after: str, pins: dict[str, str]) -> Comparison:
        baseline = self._baselines[index]
        comparison = compare(baseline.render, after, pins, baseline.noise, self._watched)
        if comparison.changes and baseline.noise and baseline.samples < 3:  # noise may show where it did not yet
            third = self._chart.renderer.render(self._chart.deployments[index], sample=2)
            baseline.noise.add(baseline.render, Render(third))
            baseline.samples = 3
            comparison = compare(baseline.render, after, pins, baseline.noise, self._watched)
        return comparison

    def _baselines_made(self) -> None:
        """Each deployment rendered twice unchanged, and what varies between the two, once a run."""
        missing = [index for index in range(len(self._chart.deployments)) if index not in self._baselines]
        renders = {(index, sample): self._pool.submit(self._chart.renderer.render, self._chart.deployments[index],
                                                      None, sample) for index in missing for sample in (0, 1)}
        for index in missing:
            first = Render(renders[index, 0].result())
            noise = Noise()
            noise.add(first, Render(renders[index, 1].result()))
            self._baselines[index] = _Baseline(first, noise, 2)
            for image, count in compare(first, first, {}, watched=self._watched).unpinned.items():
                self._unchanged[image] = self._unchanged.get(image, 0) + count
        if not self._confirmed:
            self.unpinned = dict(self._unchanged)


@dataclass
class _Verdict:
    """What the last verdict saw: the changes it named, the images it saw pinned, those it did not."""

    changes: list[Change] = field(default_factory=list)
    pinned: set[str] = field(default_factory=set)
    unshown: list[str] = field(default_factory=list)
