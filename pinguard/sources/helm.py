"""Helm values files: image scalars, and the structured blocks charts use.

    image:                      image:
      registry: docker.io         repository: quay.io/kuberay/operator
      repository: bitnami/nginx   tag: v1.1.0
      tag: 1.25.3
      digest: ""

The reference is assembled from `registry`, `repository` (or `image`, as
ingress-nginx names it) and `tag`. How it is pinned depends on what the chart renders:

- the chart at hand (a Chart.yaml above the values file) reads the block's
  `digest` (or `sha`: bare hex where the chart writes `@sha256:{{ .sha }}`, the
  whole digest where it writes `@{{ .sha }}`): the digest goes there, added
  after `tag` when absent;
- otherwise the digest goes into the tag, `tag: 1.25.3@sha256:...`, which the
  usual `{{ .repository }}:{{ .tag }}` renders as a pinned reference
  (see tagform.py). A `digest:` the chart at hand does not read pins nothing:
  it is reported (`Found.unread_digest`), never counted.

For the chart of a values file that is not at hand, the policy can say that it
reads `digest` (`helm: {digest-read: [GLOB]}`); a digest already written there is
taken as the user's way of pinning. So is a block the chart hands to a named
template it does not hold (a library chart fetched at build time): nobody can tell.
An empty tag means the chart's appVersion, which a values file cannot tell:
reported as not resolvable. Blocks of null fields inherit a global image and
are not references.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.errors import InvalidReference
from pinguard.reference import parse
from pinguard.sources import kubernetes
from pinguard.sources.base import Found, Searched
from pinguard.sources.charts import Chart, chart_at_hand
from pinguard.sources.tagform import tag_field
from pinguard.sources.yamlnodes import (
    Located,
    compose,
    digest_field,
    is_templated,
    mapping_get,
    scalar_text,
    value_span,
)

SOURCE = "helm"
_IMAGE_KEY = re.compile(r"(?i)(^|[a-z])images?$")


def find(path: str, text: str, *, digest_read: bool = False) -> Searched:
    """`digest_read`: the policy says this file's chart reads `digest`, whether or not it is at hand."""
    where = Located(text, path, SOURCE)
    chart = chart_at_hand(path) if not digest_read else None
    found: list[Found] = []
    documents = compose(text)
    for document in documents:
        blocks = _image_blocks(document)
        inside = [(mapping.start_mark.index, mapping.end_mark.index) for _, mapping in blocks]
        # An `image:` name inside a block (`{registry, image, tag}`) is the block's, not a reference of its own.
        found.extend(item for item in kubernetes.find_in(document, where, split=True)
                     if not any(start <= item.span.start < end for start, end in inside))
        for keys, mapping in blocks:
            item = _structured(mapping, where, _Pinning(chart, keys, digest_read))
            if item is not None:
                found.append(item)
    return Searched(sorted(found, key=lambda f: f.span.start), documents)


def _name_key(block: MappingNode) -> str | None:
    """The key naming a block's image: `repository`, or `image` beside `registry`/`tag` (ingress-nginx)."""
    if scalar_text(mapping_get(block, "repository")):  # `repository: null` inherits a global image
        return "repository"
    named = scalar_text(mapping_get(block, "image"))
    return "image" if named and any(mapping_get(block, key) is not None for key in ("registry", "tag")) else None


def _image_blocks(document: Node) -> list[tuple[tuple[str, ...], MappingNode]]:
    """(values path, block) of every mapping with a `repository` (or `image`, see `_name_key`) below an image key.

    The key may be the block's own (`image:`, `thanosImage:`) or its parent's
    (`image: {busybox: {...}, kubectl: {...}}`). A list step is written `[]` in the path.
    """
    blocks: list[tuple[tuple[str, ...], MappingNode]] = []
    seen: set[int] = set()
    stack: list[tuple[Node, tuple[str, ...], bool]] = [(document, (), False)]
    while stack:
        node, keys, below_image = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, SequenceNode):
            stack.extend((item, (*keys, "[]"), False) for item in node.value)
            continue
        if not isinstance(node, MappingNode):
            continue
        if below_image and _name_key(node):
            blocks.append((keys, node))
            continue
        for key, value in node.value:
            if isinstance(key, ScalarNode) and not isinstance(value, ScalarNode):
                name = str(key.value)
                image_key = _IMAGE_KEY.search(name) is not None
                stack.append((value, (*keys, name), image_key or (below_image and len(keys) > 0 and
                                                                   _IMAGE_KEY.search(keys[-1]) is not None)))
    return sorted(blocks, key=lambda block: block[1].start_mark.index)


@dataclass(frozen=True)
class _Pinning:
    """What decides where a block's digest goes."""

    chart: Chart | None  # the chart at hand, if any
    keys: tuple[str, ...]  # the block's path in the values
    digest_read: bool  # the policy says the chart reads `digest`

    def field_read(self, declared: str | None, written: bool) -> str | None:
        """`digest` or `sha` when the chart reads it, else None (pin in the tag form).

        `declared`: the field the block has (`digest` or `sha`), `written`: whether it holds a value.
        """
        if self.chart is not None:
            candidates = [declared] if declared else ["digest", "sha"]
            reads = {name: self.chart.reads(self.keys, name) for name in candidates}
            read = next((name for name, answer in reads.items() if answer), None)
            if read is not None or None not in reads.values():
                return read
            # Handed to a helper the chart does not hold: decided as for a chart not at hand.
        if self.digest_read:
            return declared or "digest"
        return declared if written else None

    def sha_is_hex(self) -> bool:
        """Whether `sha:` holds bare hex (the chart writes `@sha256:` itself), else the whole digest."""
        return self.chart is None or self.chart.sha_is_hex(self.keys)


def _structured(image: MappingNode, where: Located, pinning: _Pinning) -> Found | None:
    repository_node = mapping_get(image, _name_key(image) or "repository")
    assert isinstance(repository_node, ScalarNode)
    repository = str(repository_node.value)
    registry = scalar_text(mapping_get(image, "registry")) or ""
    tag_node = mapping_get(image, "tag")
    tag = scalar_text(tag_node) or ""
    start, end = value_span(repository_node)
    span = where.span(start, end)
    written = f"{registry}/{repository}:{tag}" if registry else f"{repository}:{tag}"

    def unresolvable(problem: str) -> Found:
        return Found(where.path, SOURCE, span, where.text[start:end], None, problem)

    if where.text[start:end] != repository:
        return unresolvable("written with escapes or over several lines; write it as a plain or quoted value")
    if any(is_templated(part) for part in (registry, repository, tag)):
        return unresolvable(f"templated value {written!r} cannot be resolved")
    if not tag or not isinstance(tag_node, ScalarNode):
        return unresolvable("no tag: the chart's appVersion decides it, which a values file does not say")
    declared = next((name for name in ("digest", "sha") if mapping_get(image, name) is not None), None)
    digest_node = mapping_get(image, declared) if declared else None
    current = scalar_text(digest_node) or ""
    read = pinning.field_read(declared, bool(current))
    try:
        reference = parse(written)
    except InvalidReference as exc:
        return unresolvable(str(exc))
    if read is None:
        field = tag_field(tag_node, where, flow=image.flow_style is True)
        if field is None:
            return unresolvable("its tag is not a plain or quoted value; pinguard cannot edit it")
        unread = where.span(*value_span(digest_node)) if current and isinstance(digest_node, ScalarNode) else None
        return Found(where.path, SOURCE, span, repository, reference, digest_field=field, unread_digest=unread)
    hex_only = read == "sha" and pinning.sha_is_hex()
    digest = digest_field(image, tag_node, where, read, hex_only=hex_only)
    if digest is None:
        return unresolvable(f"its {read} field is not a plain or quoted value; pinguard cannot edit it")
    try:
        if current:
            reference = reference.with_digest("sha256:" + current if hex_only else current)
    except InvalidReference as exc:
        return unresolvable(str(exc))
    return Found(where.path, SOURCE, span, repository, reference, digest_field=digest)
