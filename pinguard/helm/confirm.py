"""Whether a render after edits differs from the render before exactly as pinning intends.

Allowed: each image being pinned now carries its locked digest under the same
name (its tag kept, or dropped where the chart writes `name@digest`), in an
`image` value or inside a string that embeds it (a RayJob's `runtimeEnvYAML`);
label and annotation values that change with it, where labels stay valid
(Kubernetes' grammar, 63 characters), none is part of a selector, which `helm
upgrade` cannot change, and none that names an image names it otherwise. A digest
of the pins may appear nowhere but after the name of the image it was locked for:
a tag shared by two images must not carry one's digest to the other. Anything else
that changed is named.

Noise: Helm makes some values afresh in every render (`randAlphaNum` passwords,
`genSelfSignedCert` certificates, their checksums, random names). Renders of the
unchanged chart compared with each other say where (`Noise`: by the document's
place in the render and the path in it, never by line), and a difference there is
no change. An image, a label or a selector that varies is never masked: no pin is
confirmed through it.

Renders are compared document by document, and only the documents whose text
differs are read as YAML.
"""
from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from pinguard.errors import InvalidReference
from pinguard.helm.trace import Parts
from pinguard.reference import parse
from pinguard.untrusted_text import shown

_LABEL_VALUE = re.compile(r"^(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_Loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # every scalar a string, as rendered
_DIGEST = re.compile(r"[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-fA-F0-9]{32,}")
_NAMED_DIGEST = re.compile(r"([A-Za-z0-9][\w./:-]*)@(" + _DIGEST.pattern + ")")

Path = tuple[str, ...]


class Render:
    """A render's text cut into its documents, each read as YAML once, when first asked."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.documents = _documents(text)
        self._read: dict[int, Any] = {}

    def read(self, index: int) -> Any:
        """Document `index` as YAML (every scalar a string); yaml.YAMLError where it is not."""
        if index not in self._read:
            self._read[index] = yaml.load(self.documents[index], Loader=_Loader)
        return self._read[index]


def _documents(text: str) -> list[str]:
    """The documents of a stream, each with the `---` line that opens it; nothing before the first but blanks."""
    documents: list[list[str]] = [[]]
    for line in text.splitlines(keepends=True):
        if line.rstrip() == "---" or line.startswith("--- "):
            documents.append([])
        documents[-1].append(line)
    texts = ["".join(lines) for lines in documents]
    return texts[1:] if not texts[0].strip() else texts


@dataclass
class Noise:
    """What varies between renders of the unchanged input, by document index: paths masked, and paths that vary
    where nothing may (an image, a label, a selector) with the two values seen."""

    masked: dict[int, set[Path]] = field(default_factory=dict)
    guarded: dict[int, dict[Path, tuple[Any, Any]]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.masked or self.guarded)

    def add(self, first: Render, other: Render) -> None:
        """What differs between two renders of the unchanged input."""
        if len(first.documents) != len(other.documents):
            return  # documents come and go: nothing to mask, every change is named
        for index, path, was, now in _changed(first, other):
            if _guarded(path):
                self.guarded.setdefault(index, {})[path] = (was, now)
            else:
                self.masked.setdefault(index, set()).add(path)

    def covers(self, index: int, path: Path) -> bool:
        masked = self.masked.get(index, ())
        return any(path[:end] in masked for end in range(len(path) + 1))

    def varies(self, index: int, path: Path) -> tuple[Any, Any] | None:
        return self.guarded.get(index, {}).get(path)


@dataclass(frozen=True)
class Change:
    """A difference pinning does not explain, and the pinned digests it newly shows (the pins it is owed to)."""

    text: str
    digests: frozenset[str] = frozenset()
    noise: bool = False  # a value that varies between renders of the unchanged input: no pin passes through it


@dataclass
class Comparison:
    changes: list[Change] = field(default_factory=list)  # what changed that pinning does not explain
    pinned: set[str] = field(default_factory=set)  # images seen pinned to their digest
    unpinned: dict[str, int] = field(default_factory=dict)  # images being pinned still shown as they were, how often

    @property
    def unexplained(self) -> list[str]:
        return [change.text for change in self.changes]


def compare(before: str | Render, after: str | Render, pins: Mapping[str, str],
            noise: Noise | None = None, watched: Collection[str] = ()) -> Comparison:
    """How `after` differs from `before`, where `pins` maps each image string being pinned to its digest, and
    `noise` (from renders of the unchanged input) says what varies by itself. `unpinned` counts the images of
    `pins` and of `watched`."""
    old = before if isinstance(before, Render) else Render(before)
    new = after if isinstance(after, Render) else Render(after)
    result = Comparison()
    if len(old.documents) != len(new.documents):
        result.changes.append(Change(f"the render holds {len(new.documents)} documents instead of "
                                     f"{len(old.documents)}"))
        return result
    explainer = _Explainer(pins, result.pinned)
    try:
        for index, path, was, now in _changed(old, new):
            if noise is not None and noise.covers(index, path):
                continue
            where = f"{_object(old.read(index))} {'.'.join(path) or '(document)'}"
            varied = noise.varies(index, path) if noise is not None else None
            if varied is not None:
                result.changes.append(Change(
                    f"{where}: varies between two renders of the unchanged chart ({shown(str(varied[0]))!r}, then "
                    f"{shown(str(varied[1]))!r}): no pin is confirmed through a changing image, label or selector",
                    noise=True))
                continue
            explained = explainer.explain(path, was, now)
            if explained is not None:
                result.changes.append(Change(f"{where}: {explained}", explainer.shown_digests(was, now)))
        result.unpinned = _unpinned(new, {*pins, *watched})
    except yaml.YAMLError as exc:
        result.changes.append(Change(f"the render is not YAML: {shown(str(exc))}"))
    return result


def _changed(old: Render, new: Render) -> Iterator[tuple[int, Path, Any, Any]]:
    """(document index, path, value before, value after) of every difference, documents of equal text skipped."""
    for index, (was, now) in enumerate(zip(old.documents, new.documents, strict=True)):
        if was != now:
            for path, before, after in _differences(old.read(index), new.read(index), ()):
                yield index, path, before, after


def _differences(before: Any, after: Any, path: Path) -> Iterator[tuple[Path, Any, Any]]:
    stack = [(before, after, path)]
    while stack:
        was, now, where = stack.pop()
        if isinstance(was, dict) and isinstance(now, dict):
            if was.keys() != now.keys():
                yield where, sorted(map(str, was)), sorted(map(str, now))
                continue
            stack.extend((was[key], now[key], (*where, str(key))) for key in was)
        elif isinstance(was, list) and isinstance(now, list) and len(was) == len(now):
            stack.extend((item, now[index], (*where, str(index))) for index, item in enumerate(was))
        elif was != now:
            yield where, was, now


def _guarded(path: Path) -> bool:
    """Whether a value at `path` is one no noise may hide: an image, a label, a selector."""
    return (bool(path) and path[-1].lower().endswith("image")) or "labels" in path[-2:] or \
        any("selector" in step.lower() for step in path)


def _unpinned(render: Render, images: Collection[str]) -> dict[str, int]:
    """How often each of `images` is an `image` value as it is, in the documents that mention it."""
    counts: dict[str, int] = {}
    for index, text in enumerate(render.documents):
        if any(image in text for image in images):
            for value in _image_values(render.read(index)):
                if value in images:
                    counts[value] = counts.get(value, 0) + 1
    return counts


def _image_values(document: Any) -> Iterator[str]:
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "image" and isinstance(value, str):
                    yield value
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)


class _Explainer:
    """Whether a change is one pinning makes, for one comparison's pins."""

    def __init__(self, pins: Mapping[str, str], pinned: set[str]) -> None:
        self._pins = pins
        self._pinned = pinned
        self._by_digest: dict[str, list[Parts]] = {}
        for image, digest in pins.items():
            self._by_digest.setdefault(digest, []).append(Parts.of(image))

    def shown_digests(self, was: Any, now: Any) -> frozenset[str]:
        """The pinned digests `now` shows that `was` did not: where `was` is an image being pinned, but for its own
        digest when another shows too (the other's edit spoilt it)."""
        if not isinstance(now, str):
            return frozenset()
        before = set(_DIGEST.findall(was)) if isinstance(was, str) else set()
        shown = frozenset(digest for digest in _DIGEST.findall(now) if digest in self._by_digest) - before
        own = self._pins.get(was) if isinstance(was, str) else None
        return shown - {own} if own in shown and len(shown) > 1 else shown

    def explain(self, path: Path, was: Any, now: Any) -> str | None:
        """None when the change is one pinning makes; else what the render showed."""
        change = f"{shown(str(was))!r} became {shown(str(now))!r}"
        if not isinstance(was, str) or not isinstance(now, str):
            return change
        if was in self._pins:
            if _pinned_form(was, now, self._pins[was]):
                self._pinned.add(was)
                return None
            return f"the image {change}, not {was} pinned to {self._pins[was]}"
        embedded = [image for image in self._pins if _embedded(image).search(was)]
        if embedded and _embeds_pinned(was, now, embedded, self._pins):
            self._pinned.update(embedded)
            return None
        if any("selector" in step.lower() for step in path):
            return f"{change} in a selector, which `helm upgrade` cannot change"
        foreign = self._foreign_digest(was, now)
        if len(path) >= 3 and path[-3] == "metadata" and path[-2] in ("labels", "annotations"):
            if path[-2] == "labels" and not (len(now) <= 63 and _LABEL_VALUE.match(now)):
                return f"{change}, not a valid label value (at most 63 letters, digits, `-`, `_`, `.`)"
            if foreign is None and _names_image(was):
                return f"{change}: it names an image, which may change only to carry its own locked digest"
            if foreign is None:
                return None
        if foreign is not None:
            return f"{change}: it names {shown(foreign)}, which is not that image pinned to its locked digest"
        return change

    def _foreign_digest(self, was: str, now: str) -> str | None:
        """A `name@digest` that `now` writes and `was` did not, with a digest of the pins after a name other than
        the image it was locked for."""
        before = set(_NAMED_DIGEST.findall(was))
        for name, digest in _NAMED_DIGEST.findall(now):
            if (name, digest) in before or digest not in self._by_digest:
                continue
            written = Parts.of(f"{name}@{digest}")
            if not any(parts.name == written.name and written.tag in (parts.tag, "")
                       for parts in self._by_digest[digest]):
                return f"{name}@{digest}"
        return None


def _names_image(value: str) -> bool:
    """Whether a label or annotation value reads as an image reference: a name with a `/` or a tag."""
    if "/" not in value and ":" not in value:
        return False
    try:
        parse(value)
    except InvalidReference:
        return False
    return True


def _pinned_form(was: str, now: str, digest: str) -> bool:
    """Whether `now` is `was` pinned to `digest`: the same name, the same tag or none, a valid reference."""
    old, new = Parts.of(was), Parts.of(now)
    if new.digest != digest or new.name != old.name or new.tag not in (old.tag, ""):
        return False
    try:
        parse(now)
    except InvalidReference:
        return False
    return True


def _embeds_pinned(was: str, now: str, images: Sequence[str], pins: Mapping[str, str]) -> bool:
    """Whether `now` is `was` with each of `images` written pinned, with its tag or without."""
    for keep_tag in (True, False):
        expected = was
        for image in sorted(images, key=len, reverse=True):
            parts = Parts.of(image)
            name = f"{parts.name}:{parts.tag}" if keep_tag and parts.tag else parts.name
            expected = _embedded(image).sub(f"{name}@{pins[image]}".replace("\\", "\\\\"), expected)
        if expected == now:
            return True
    return False


def _embedded(image: str) -> re.Pattern[str]:
    """`image` as a whole reference inside a longer string: not part of a longer name, tag or digest."""
    return re.compile(rf"(?<![\w./:@-]){re.escape(image)}(?![\w./:@-])")


def _object(document: Any) -> str:
    if not isinstance(document, dict):
        return "a document"
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return f"{document.get('kind', 'an object')}/{name}" if name else str(document.get("kind", "an object"))
