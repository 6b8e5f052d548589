"""Pinning a chart's values files, written only where Helm confirms it.

Each image to pin has its placements, in order: the block's `digest` (or `sha`,
as the whole digest or bare hex) where it has one, the tag form (`tag:
1.2.3@sha256:…`), a `digest:` added after the tag, a `tag:` added or filled with
the tag the chart renders (an appVersion default). All images' first placements
are rendered together, once; where the render disagrees, the set is halved until
the images it disagrees about are found, and those try their next placement.
An image no placement pins is reported with what the render showed: the chart
cannot carry a digest through its values, and `pinguard post-render` can pin it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from yaml.nodes import MappingNode, ScalarNode

from pinguard.errors import PinguardError
from pinguard.helm.binary import RenderFailed
from pinguard.helm.confirm import compare
from pinguard.helm.judge import JudgedChart
from pinguard.helm.trace import DIGEST_KEYS, Leaf, Parts, Trace
from pinguard.sources.base import Found
from pinguard.sources.tagform import tag_field
from pinguard.sources.yamlnodes import digest_field, mapping_get
from pinguard.write.edits import Edit, apply, field_edit
from pinguard.write.placing import Item, Search


@dataclass(frozen=True)
class Placement:
    """Where an image's digest is written: what to call it, and its edits by file (resolved path)."""

    name: str
    edits: tuple[tuple[Path, Edit], ...]
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
        placements = tuple(p for p in _placements(use.trace, use.image, digest) if p.edits)
        if not placements:
            refused.append((found, f"{CANNOT}: its values line is not a plain or quoted value pinguard can edit"))
            continue
        items.append(Item(found, use.image, digest, placements))
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


def _placements(trace: Trace, image: str, digest: str) -> list[Placement]:
    if trace.whole is not None:
        return [_in_tag(trace.whole, digest, "in the image value")]
    block = trace.block
    assert block is not None
    anchor = trace.tag or trace.name
    declared = next((key for key in DIGEST_KEYS if mapping_get(block, key) is not None), None)
    digest_fields: list[Placement] = []
    if anchor is not None:
        for key in [declared] if declared else ["digest"]:
            digest_fields.append(_field(anchor, block, key, digest, hex_only=False))
            if key == "sha":
                digest_fields.append(_field(anchor, block, key, digest, hex_only=True))
    tag_form = [_in_tag(trace.tag, digest, "in the tag")] if trace.tag is not None else []
    filled = [_filled_tag(trace.name, block, key, Parts.of(image).tag, digest) for key in ("tag", "version")
              if trace.tag is None and trace.name is not None and Parts.of(image).tag]
    return [*digest_fields, *tag_form, *filled] if declared else [*tag_form, *digest_fields, *filled]


def _in_tag(leaf: Leaf, digest: str, name: str) -> Placement:
    """`@digest` after the value (or over the digest it carries); a number is written as the string Helm prints."""
    if leaf.printed != leaf.node.value:  # a number: Helm prints it otherwise
        return Placement(name, ((leaf.path.resolve(), Edit(leaf.node.start_mark.index, leaf.node.end_mark.index,
                                                           f'"{leaf.printed}@{digest}"')),))
    field = tag_field(leaf.node, leaf.where, flow=leaf.block.flow_style is True) if leaf.written() else None
    return Placement(name, () if field is None else ((leaf.path.resolve(), field_edit(field, digest)),))


def _field(anchor: Leaf, block: MappingNode, key: str, digest: str, *, hex_only: bool) -> Placement:
    field = digest_field(block, anchor.node, anchor.where, key, hex_only=hex_only)
    name = f"in `{key}`{' as bare hex' if hex_only else ''}" if mapping_get(block, key) is not None else \
        f"in a new `{key}:`"
    return Placement(name, () if field is None else ((anchor.path.resolve(), field_edit(field, digest)),))


def _filled_tag(name: Leaf, block: MappingNode, key: str, tag: str, digest: str) -> Placement:
    """The tag the chart renders (its appVersion), with the digest, in the block's empty `key` or a new one."""
    value = f'"{tag}@{digest}"'
    existing = mapping_get(block, key)
    if isinstance(existing, ScalarNode):
        edits = () if existing.value else ((name.path.resolve(), Edit(existing.start_mark.index,
                                                                      existing.end_mark.index, value)),)
        return Placement(f"in the empty `{key}:`, with the tag it renders", edits)
    field = digest_field(block, name.node, name.where, key)
    return Placement(f"in a new `{key}:`, with the tag it renders", () if field is None else (
        (name.path.resolve(), Edit(field.start, field.end, field.prefix + value + field.suffix)),))
