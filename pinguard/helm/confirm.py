"""Whether a render after edits differs from the render before exactly as pinning intends.

Allowed: each image being pinned now carries its locked digest under the same
name (its tag kept, or dropped where the chart writes `name@digest`), in an
`image` value or inside a string that embeds it (a RayJob's `runtimeEnvYAML`);
label and annotation values that change with it, where labels stay valid
(Kubernetes' grammar, 63 characters) and none is part of a selector, which
`helm upgrade` cannot change. Anything else that changed is named.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from pinguard.errors import InvalidReference
from pinguard.helm.trace import Parts
from pinguard.reference import parse
from pinguard.untrusted_text import shown

_LABEL_VALUE = re.compile(r"^(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_Loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # every scalar a string, as rendered


@dataclass
class Comparison:
    unexplained: list[str] = field(default_factory=list)  # what changed that pinning does not explain
    pinned: set[str] = field(default_factory=set)  # images seen pinned to their digest


def compare(before: str, after: str, pins: Mapping[str, str]) -> Comparison:
    """How `after` differs from `before`, where `pins` maps each image string being pinned to its digest."""
    result = Comparison()
    try:
        old, new = list(yaml.load_all(before, Loader=_Loader)), list(yaml.load_all(after, Loader=_Loader))
    except yaml.YAMLError as exc:
        result.unexplained.append(f"the render is not YAML: {shown(str(exc))}")
        return result
    if len(old) != len(new):
        result.unexplained.append(f"the render holds {len(new)} documents instead of {len(old)}")
        return result
    for before_doc, after_doc in zip(old, new, strict=True):
        for path, was, now in _differences(before_doc, after_doc, ()):
            explained = _explain(path, was, now, pins, result.pinned)
            if explained is not None:
                result.unexplained.append(f"{_object(before_doc)} {'.'.join(path) or '(document)'}: {explained}")
    return result


def _differences(before: Any, after: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any, Any]]:
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


def _explain(path: tuple[str, ...], was: Any, now: Any, pins: Mapping[str, str], pinned: set[str]) -> str | None:
    """None when the change is one pinning makes; else what the render showed."""
    change = f"{shown(str(was))!r} became {shown(str(now))!r}"
    if not isinstance(was, str) or not isinstance(now, str):
        return change
    if was in pins:
        if _pinned_form(was, now, pins[was]):
            pinned.add(was)
            return None
        return f"the image {change}, not {was} pinned to {pins[was]}"
    embedded = [image for image in pins if _embedded(image).search(was)]
    if embedded and _embeds_pinned(was, now, embedded, pins):
        pinned.update(embedded)
        return None
    if any("selector" in step.lower() for step in path):
        return f"{change} in a selector, which `helm upgrade` cannot change"
    if len(path) >= 3 and path[-3] == "metadata" and path[-2] in ("labels", "annotations"):
        if path[-2] == "labels" and not (len(now) <= 63 and _LABEL_VALUE.match(now)):
            return f"{change}, not a valid label value (at most 63 letters, digits, `-`, `_`, `.`)"
        return None
    return change


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


def _embeds_pinned(was: str, now: str, images: list[str], pins: Mapping[str, str]) -> bool:
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
