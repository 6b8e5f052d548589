"""Which values line controls a rendered image.

Every scalar of a deployment's values files (and of its vendored subcharts') is a
leaf, indexed by the string Helm prints for it (`charts.helm_text`: `1.10` is `1.1`).
A rendered image `registry/path/name:tag@digest` is looked up by its parts: its tag
(and the tag with a suffix such as `-distroless` cut, or a leading `v`), each run of
its path segments, its digest. The leaves found are grouped by their block's path in
the values, as Helm merges files; the block that names no other rendered image and
holds the tag (then names the image) is the one that controls it. Lookups go through
dictionaries, so tracing is linear in the values and the images.

This only nominates: nothing is written on its word. `pin` renders again with
its edits and keeps them only when the render shows the image pinned (confirm.py).
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.helm.charts import helm_text
from pinguard.sources.yamlnodes import Located, compose

_STRING = "tag:yaml.org,2002:str"  # every scalar but a null, as the sources read YAML
_TAG_CUT = re.compile(r"[-_+]")
_TAG_KEY = re.compile(r"(?i)tag|version")
_NAME_KEYS = ("repository", "image", "name")  # what a block names its image by
DIGEST_KEYS = ("digest", "sha")


@dataclass(frozen=True, eq=False)
class Leaf:
    """One scalar of a values file: the key it is under, the mapping holding it, how Helm prints it."""

    where: Located
    node: ScalarNode
    block: MappingNode
    at: tuple[str, ...]  # the block's path in the values
    key: str
    printed: str
    order: int  # which values file: a later one wins where two set the same value

    @property
    def path(self) -> Path:
        return Path(self.where.path)



@dataclass(frozen=True)
class Parts:
    """A rendered image string cut where a reference's parts meet; the name as written, not normalised."""

    name: str
    tag: str
    digest: str

    @classmethod
    def of(cls, image: str) -> Parts:
        rest, _, digest = image.partition("@")
        slash = rest.rfind("/")
        colon = rest.rfind(":")
        if colon > slash:
            return cls(rest[:colon], rest[colon + 1:], digest)
        return cls(rest, "", digest)


@dataclass(frozen=True)
class Trace:
    """The leaves that control one rendered image; `block` is where its digest can go."""

    block: MappingNode | None
    tag: Leaf | None  # the leaf that prints the tag (perhaps with a suffix the chart adds)
    name: Leaf | None  # the leaf that prints the end of the name (the repository)
    whole: Leaf | None  # a leaf that prints the whole image (`image: nginx:1.25`)
    digest: Leaf | None  # a digest or sha leaf of the block
    rivals: int  # other blocks that would have served as well: a guess among them

    @property
    def primary(self) -> Leaf | None:
        """The line a finding about the image points at."""
        return self.whole or self.tag or self.name


class Leaves:
    """Every leaf of some values files, indexed by what Helm prints."""

    def __init__(self, files: list[tuple[Path, str, tuple[str, ...]]]) -> None:
        """`files`: (path, text, where its values sit: a subchart's under its name), the first overridden
        by the later."""
        self._by_printed: dict[str, list[Leaf]] = defaultdict(list)
        self._by_key: dict[tuple[tuple[str, ...], str], Leaf] = {}  # the last file's leaf at each values path
        for order, (path, text, prefix) in enumerate(files):
            where = Located(text, path.as_posix(), "helm")
            for document in compose(text):
                for block, at, key, value in _pairs(document, prefix):
                    printed = _printed(value)
                    if printed is not None:
                        leaf = Leaf(where, value, block, at, key, printed, order)
                        self._by_printed[printed].append(leaf)
                        self._by_key[(at, key)] = leaf

    def trace(self, image: str, rendered: frozenset[str] = frozenset()) -> Trace | None:
        """The block of leaves that most likely controls `image`; None when no leaf prints any of it."""
        traces = self.traces(image, rendered)
        return traces[0] if traces else None

    def traces(self, image: str, rendered: frozenset[str] = frozenset()) -> list[Trace]:
        """The blocks of leaves that may control `image`, the likeliest first; after it, every other block that
        prints the whole image, or its tag and the end of its name (a chart may render one image from two).

        Blocks are told apart by their path in the values, as Helm merges values files: a later file's
        `tag` and an earlier file's `repository` at one path make one block. `rendered`: the names (each
        run of path segments) of the images the chart renders; a block naming another of those is its.
        """
        parts = Parts.of(image)
        whole = [leaf for form in _whole_forms(parts) for leaf in self._by_printed.get(form, ())]
        if whole:
            whole.sort(key=lambda candidate: candidate.order, reverse=True)
            return [Trace(leaf.block, None, None, leaf, self._digest_leaf(leaf.at), len(whole) - 1) for leaf in whole]
        candidates: dict[tuple[str, ...], _Candidate] = {}
        whole_tags = (parts.tag, f"{parts.tag}@{parts.digest}")
        for rank, form in enumerate(_tag_forms(parts)):
            for leaf in self._live(form):
                if form not in whole_tags and not _TAG_KEY.search(leaf.key):
                    continue  # only a tag value has a suffix added to it
                candidate = candidates.setdefault(leaf.at, _Candidate())
                if candidate.tag is None:
                    candidate.tag, candidate.tag_rank = leaf, rank
        for form in name_forms(parts.name):
            ends_name = parts.name == form or parts.name.endswith("/" + form)
            for leaf in self._live(form):
                candidate = candidates.setdefault(leaf.at, _Candidate())
                if len(form) > candidate.covered:
                    candidate.covered, candidate.covering = len(form), leaf
                if ends_name and (candidate.name is None or len(candidate.name.printed) < len(form)):
                    candidate.name = leaf
        if not candidates:
            return []
        names = set(name_forms(parts.name))
        for at, candidate in candidates.items():
            named = [self._by_key.get((at, key)) for key in _NAME_KEYS]
            candidate.named_otherwise = any(leaf is not None and leaf.printed not in names and leaf.printed in rendered
                                            for leaf in named)
            candidate.digest = self._digest_leaf(at)
            candidate.digest_shown = candidate.digest is not None and bool(parts.digest) and \
                candidate.digest.printed in (parts.digest, parts.digest.partition(":")[2])
        ranked = sorted(candidates.values(), key=_Candidate.rank, reverse=True)
        best = ranked[0]
        rivals = sum(1 for other in ranked[1:] if other.rank() == best.rank())
        others = [other for other in ranked[1:] if other.tag is not None and other.name is not None
                  and not other.named_otherwise]
        return [candidate.trace(rivals) for candidate in (best, *others)]

    def _live(self, printed: str) -> list[Leaf]:
        """The leaves printing `printed` that no later values file overrides."""
        return [leaf for leaf in self._by_printed.get(printed, ()) if self._by_key.get((leaf.at, leaf.key)) is leaf]

    def _digest_leaf(self, at: tuple[str, ...]) -> Leaf | None:
        return next((leaf for key in DIGEST_KEYS if (leaf := self._by_key.get((at, key))) is not None), None)


def _pairs(root: Node, prefix: tuple[str, ...]) -> Iterator[tuple[MappingNode, tuple[str, ...], str, ScalarNode]]:
    """Every (mapping, its path in the values, key, scalar value) below `root`, each node once."""
    seen: set[int] = set()
    stack: list[tuple[Node, tuple[str, ...]]] = [(root, prefix)]
    while stack:
        node, at = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if not isinstance(key, ScalarNode):
                    continue
                if isinstance(value, ScalarNode):
                    yield node, at, str(key.value), value
                else:
                    stack.append((value, (*at, str(key.value))))
        elif isinstance(node, SequenceNode):
            stack.extend((item, (*at, f"[{index}]")) for index, item in enumerate(node.value))


@dataclass(eq=False)
class _Candidate:
    """A block (a path in the values) some leaves of which print parts of an image."""

    tag: Leaf | None = None
    tag_rank: int = 0  # 0: the whole tag; more: the tag cut further
    name: Leaf | None = None  # the leaf printing the end of the name
    covering: Leaf | None = None  # the leaf printing the most of the name
    covered: int = 0
    digest: Leaf | None = None  # the block's digest or sha leaf
    digest_shown: bool = False  # whose value the image carries
    named_otherwise: bool = False  # the block names another rendered image: a tag it shares is not this image's

    def trace(self, rivals: int) -> Trace:
        anchor = self.tag or self.name or self.covering
        assert anchor is not None
        return Trace(anchor.block, self.tag, self.name or self.covering, None, self.digest, rivals)

    def rank(self) -> tuple[bool, bool, int, bool, bool, int, int]:
        """Best first: a block that names no other image, holding the tag (whole, then cut), naming the image,
        holding its digest, printing the most of its name, from the later values file."""
        leaves = [leaf for leaf in (self.tag, self.covering) if leaf is not None]
        return (not self.named_otherwise, self.tag is not None, -self.tag_rank, self.name is not None,
                self.digest_shown, self.covered, max(leaf.order for leaf in leaves))


def _whole_forms(parts: Parts) -> list[str]:
    """The image as one value: with its digest, without, and (a tag form pin) the tag holding the digest."""
    with_tag = f"{parts.name}:{parts.tag}" if parts.tag else parts.name
    return list(dict.fromkeys((f"{with_tag}@{parts.digest}" if parts.digest else with_tag, with_tag)))


def _tag_forms(parts: Parts) -> list[str]:
    """The tag with the digest (a tag form pin), the tag, then the tag cut before each `-`, `_` or `+` from the
    right (a suffix the chart adds), then without `v`."""
    tag = parts.tag
    if not tag:
        return []
    forms = [f"{tag}@{parts.digest}", tag] if parts.digest else [tag]
    forms.extend(tag[:match.start()] for match in reversed(list(_TAG_CUT.finditer(tag))) if match.start() > 0)
    if tag[:1] == "v" and tag[1:2].isdigit():
        forms.append(tag[1:])
    return list(dict.fromkeys(forms))


def name_forms(name: str) -> list[str]:
    """Every run of the name's path segments."""
    segments = name.split("/")
    if len(segments) > 16:  # no registry path is this deep: a hostile value, not worth the square
        segments = segments[-16:]
    return [form for start in range(len(segments)) for end in range(start + 1, len(segments) + 1)
            if (form := "/".join(segments[start:end]))]


def _printed(node: Node) -> str | None:
    """How Helm prints a scalar in a template (`charts.helm_text`); None for a null or an empty value."""
    if not isinstance(node, ScalarNode) or not node.value or node.tag != _STRING:
        return None
    return helm_text(node)
