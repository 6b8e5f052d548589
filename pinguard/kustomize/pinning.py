"""Pinning a kustomization the way kustomize reads it, written only where a second build confirms it.

Each image to pin has its placements, in order: the `digest:` of the `images:` entry that sets
its tag or digest (filled, or added after `newTag`); `name:tag@digest` where a resource, a patch
file or an inline patch writes it whole; the `digest:` of an entry that only renames it; a new
entry `- name: X` / `digest: …` in the kustomization built. Only files of the scan are edited.
All images' first placements are built together, once; where the build disagrees, the set is
halved until the images it disagrees about are found, and those try their next placement. An
image no placement pins is reported with what the build showed.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from yaml.nodes import MappingNode, SequenceNode

from pinguard.errors import PinguardError
from pinguard.helm.confirm import compare
from pinguard.helm.trace import Parts
from pinguard.kustomize.binary import BuildFailed
from pinguard.kustomize.judge import Built
from pinguard.kustomize.trace import Entry, Trace, Written
from pinguard.sources.base import Found
from pinguard.sources.yamlnodes import compose, digest_field, line_break, mapping_get
from pinguard.write.edits import Edit, apply, field_edit
from pinguard.write.placing import Item, Search

CANNOT = "kustomize does not carry a digest written in any place pinguard can edit"


@dataclass(frozen=True)
class Placement:
    """Where an image's digest is written: what to call it, and its edits by file (resolved path); or, for a new
    `images:` entry, the kustomization it goes in and the name it matches."""

    name: str
    edits: tuple[tuple[Path, Edit], ...] = ()
    new_entry: tuple[Path, str] | None = None


@dataclass
class BuildPlan:
    edits: dict[Path, list[Edit]]  # by resolved path, of files that change: two builds of one base add theirs up
    refused: list[tuple[Found, str]]  # what could not be pinned, and what the build showed


def plan_build(built: Built, wanted: Sequence[tuple[Found, str]]) -> BuildPlan:
    """Confirmed edits pinning each (found, locked digest) of one build; the others refused with a reason."""
    refused: list[tuple[Found, str]] = []
    items: list[Item[Placement]] = []
    for found, digest in wanted:
        trace = built.traces.get(found.rendered or "")
        placements = () if trace is None else tuple(_placements(built, trace, found.rendered or "", digest))
        if not placements:
            refused.append((found, f"{CANNOT}: no line of the scan controls it"))
        else:
            items.append(Item(found, found.rendered or "", digest, placements))
    confirmer = _Confirmer(built)
    accepted, failed = confirmer.settle_all(items)
    refused.extend((item.found, f"{CANNOT}: {reason}") for item, reason in failed)
    return BuildPlan(confirmer.edits(accepted) if accepted else {}, refused)


class _Confirmer(Search[Placement]):
    def __init__(self, built: Built) -> None:
        super().__init__()
        self._built = built

    def texts(self, items: list[Item[Placement]]) -> dict[Path, str]:
        return {path: apply(self._built.texts[path], file_edits) for path, file_edits in self.edits(items).items()}

    def edits(self, items: list[Item[Placement]]) -> dict[Path, list[Edit]]:
        edits: dict[Path, list[Edit]] = {}
        entries: dict[Path, dict[str, str]] = {}
        for item in items:
            placement = self.placement(item)
            for path, edit in placement.edits:
                edits.setdefault(path, []).append(edit)
            if placement.new_entry is not None:
                top, name = placement.new_entry
                entries.setdefault(top, {})[name] = item.digest
        for top, named in entries.items():
            added = _new_entries(self._built.texts[top], named)
            if added is None:
                raise BuildFailed(f"{top}: its `images:` is not a block list pinguard can add an entry to")
            edits.setdefault(top, []).append(added)
        return edits

    def verdict(self, items: list[Item[Placement]]) -> str | None:
        """None when building with these items' edits changes exactly their images; else what it showed."""
        try:
            after = self._built.build(self.texts(items))
        except BuildFailed as exc:
            return f"kustomize fails once it is written: {exc}"
        except PinguardError as exc:  # overlapping edits: two images want one value to say different things
            return f"two images share the value it would be written in ({exc})"
        pins = {item.image: item.digest for item in items}
        comparison = compare(self._built.build(), after, pins)
        if comparison.unexplained:
            return "; ".join(comparison.unexplained[:3])
        unshown = [image for image in pins if image not in comparison.pinned]
        return f"the build does not carry the digest: {unshown[0]} still builds unpinned" if unshown else None


def _placements(built: Built, trace: Trace, image: str, digest: str) -> list[Placement]:
    entry = trace.entry if trace.entry is not None and trace.entry.path in built.scanned else None
    placements = []
    if entry is not None and {"newTag", "digest"} & entry.values.keys():
        placements.append(_entry_digest(entry, digest))
    if trace.written is not None and trace.written.path in built.scanned:
        placements.append(_whole(trace.written, digest))
    if entry is not None and not {"newTag", "digest"} & entry.values.keys():
        placements.append(_entry_digest(entry, digest))
    if built.top in built.scanned and entry is None:
        placements.append(Placement("in a new `images:` entry", new_entry=(built.top, Parts.of(image).name)))
    return [placement for placement in placements if placement.edits or placement.new_entry]


def _entry_digest(entry: Entry, digest: str) -> Placement:
    after = mapping_get(entry.node, "newTag") or mapping_get(entry.node, "newName") or mapping_get(entry.node, "name")
    field = digest_field(entry.node, after, entry.where, "digest") if after is not None else None
    name = "in the entry's `digest:`" if "digest" in entry.values else "in a new `digest:` of its `images:` entry"
    return Placement(name, () if field is None else ((entry.path, field_edit(field, digest)),))


def _whole(written: Written, digest: str) -> Placement:
    """`name:tag@digest` over the value as written (its old digest replaced)."""
    name_and_tag = written.value.partition("@")[0]
    if not Parts.of(name_and_tag).tag:
        name_and_tag += ":latest"  # what the lock resolved; written out so the pin reads back to its entry
    return Placement("in the value written whole", ((written.path, Edit(written.start, written.end,
                                                                        f"{name_and_tag}@{digest}")),))


def _new_entries(text: str, named: dict[str, str]) -> Edit | None:
    """One edit adding an `images:` entry for each (name, digest): before the first entry, or a new `images:`."""
    documents = compose(text)
    if len(documents) != 1 or not isinstance(documents[0], MappingNode):
        return None
    newline = line_break(text)
    images = mapping_get(documents[0], "images")
    if images is None:
        lines = [f"images:{newline}", *(f"- name: {name}{newline}  digest: {digest}{newline}"
                                       for name, digest in sorted(named.items()))]
        return Edit(len(text), len(text), ("" if text.endswith(newline) or not text else newline) + "".join(lines))
    if not isinstance(images, SequenceNode) or images.flow_style or not images.value:
        return None
    first = images.value[0]
    line_start = text.rfind("\n", 0, first.start_mark.index) + 1
    prefix = text[line_start:first.start_mark.index]
    if not isinstance(first, MappingNode) or prefix.strip() != "-":
        return None
    inner = " " * len(prefix)
    added = "".join(f"{prefix}name: {name}{newline}{inner}digest: {digest}{newline}"
                    for name, digest in sorted(named.items()))
    return Edit(line_start, line_start, added)

