"""Span edits: the characters of a reference replaced, and nothing else; a diff of what they change."""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

from pinguard.errors import PinguardError
from pinguard.read.files import TextFile
from pinguard.sources.base import DigestField, Found


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


def pin_edit(found: Found, digest: str) -> Edit:
    """The edit that pins one reference to `digest`: the digest field, or `name:tag@digest` in place."""
    if found.digest_field is not None:
        return field_edit(found.digest_field, digest)
    name_and_tag = found.value.partition("@")[0]
    if found.reference is not None and found.reference.tag is None:
        name_and_tag += ":latest"  # what the lock resolved; written out so the pin reads back to its entry
    return Edit(found.span.start, found.span.end, name_and_tag + "@" + digest)


def field_edit(field: DigestField, digest: str) -> Edit:
    """The edit writing `digest` where a digest field (or a tag's `@digest`) goes."""
    value = digest.partition(":")[2] if field.hex_only else digest
    return Edit(field.start, field.end, field.prefix + value + field.suffix)


def apply(text: str, edits: Iterable[Edit]) -> str:
    """`text` with every edit made; edits must not overlap (two of the same place are one)."""
    ordered = sorted(set(edits), key=lambda e: (e.start, e.end, e.text))  # insertions at one place: one order
    pieces: list[str] = []
    position = 0
    for edit in ordered:
        if edit.start < position:
            raise PinguardError(f"overlapping edits at character {edit.start}")
        pieces.append(text[position:edit.start])
        pieces.append(edit.text)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)


def unified_diff(file: TextFile, text: str) -> list[str]:
    """What writing `text` over `file` would change, as `diff -u` shows it."""
    name = file.path.as_posix()
    lines = difflib.unified_diff(file.text.splitlines(keepends=True), text.splitlines(keepends=True),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    return [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]
