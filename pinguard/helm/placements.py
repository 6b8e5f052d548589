"""Where an image's digest can be written in a chart's values, best first.

The block's `digest` (or `sha`, as the whole digest or bare hex) where it has one,
the tag form (`tag: 1.2.3@sha256:…`), a `digest:` added after the tag, a `tag:`
added or filled (empty or null) with the tag the chart renders (an appVersion default).
Each is only a candidate: `pinning.py` keeps the one a render confirms. A place whose
shape cannot be edited safely has no edits: never YAML that no longer reads.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from yaml.nodes import MappingNode, ScalarNode

from pinguard.helm.trace import DIGEST_KEYS, Leaf, Parts, Trace
from pinguard.helm.values import whole_tag_field
from pinguard.sources.tagform import tag_field
from pinguard.sources.yamlnodes import digest_field, mapping_get, scalar_text
from pinguard.write.edits import Edit, field_edit


@dataclass(frozen=True)
class Placement:
    """Where an image's digest is written: what to call it, and its edits by file (resolved path)."""

    name: str
    edits: tuple[tuple[Path, Edit], ...]


def placements(trace: Trace, image: str, digest: str) -> list[Placement]:
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
        field = whole_tag_field(leaf.block, leaf.node, leaf.where, leaf.key, leaf.printed)
    else:
        field = tag_field(leaf.node, leaf.where, flow=leaf.block.flow_style is True)
    return Placement(name, () if field is None else ((leaf.path.resolve(), field_edit(field, digest)),))


def _field(anchor: Leaf, block: MappingNode, key: str, digest: str, *, hex_only: bool) -> Placement:
    field = digest_field(block, anchor.node, anchor.where, key, hex_only=hex_only)
    name = f"in `{key}`{' as bare hex' if hex_only else ''}" if mapping_get(block, key) is not None else \
        f"in a new `{key}:`"
    return Placement(name, () if field is None else ((anchor.path.resolve(), field_edit(field, digest)),))


def _filled_tag(name: Leaf, block: MappingNode, key: str, tag: str, digest: str) -> Placement:
    """The tag the chart renders (its appVersion), with the digest, in the block's empty or null `key`, or a new one."""
    held = mapping_get(block, key)
    fillable = held is None or (isinstance(held, ScalarNode) and not scalar_text(held))
    field = whole_tag_field(block, name.node, name.where, key, tag) if fillable else None
    return Placement(f"in {'a new' if held is None else 'the empty'} `{key}:`, with the tag it renders",
                     () if field is None else ((name.path.resolve(), field_edit(field, digest)),))
