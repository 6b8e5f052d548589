"""Span edits: the characters of a reference replaced, and nothing else; a diff of what they change."""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

from pinguard.errors import PinguardError
from pinguard.read.files import TextFile
from pinguard.sources.base import ActionUse, DigestField, Found, Span
from pinguard.untrusted_text import shown
from pinguard.uses import COMMIT, is_ref, read_version, version_word


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


def action_pin_edits(use: ActionUse, commit: str, version: str) -> list[Edit]:
    """The edits making a `uses:` read `owner/repo[/path]@<commit> # <version>`, as pinact and ratchet write it.

    The ref after the value's last `@` becomes `commit`; of the comment after the value, a version
    (`pinguard.uses.read_version`) is replaced where it is written, the rest of the comment kept; a
    comment naming none gets `# <version> ` written in front of it; no comment, ` # <version>` after the
    value and its closing quote. A version with no digit is written `tag=<version>`, so that it reads back.
    No edit where the use already reads so. Nothing is decided before `commit` and `version` are checked.
    """
    where = f"{use.path}:{use.line}:{use.column}"
    if use.action is None or use.problem is not None:
        why = use.problem or f"{use.value!r} names no action of another repository, but a {use.kind} one"
        raise PinguardError(f"{where}: no action to pin: {shown(why)}")
    if COMMIT.fullmatch(commit) is None:
        raise PinguardError(f"{where}: {shown(commit)!r} is no commit: 40 or 64 lowercase hex digits")
    if not is_ref(version) or COMMIT.fullmatch(version) is not None:
        raise PinguardError(f"{where}: {shown(version)!r} is no tag to write as the version of a commit")
    edits = [Edit(use.span.end - len(use.action.ref), use.span.end, commit)] if use.action.ref != commit else []
    word = version_word(version)
    if use.comment is not None and use.comment_text is not None:
        edits.extend(_version_edit(use.comment, use.comment_text, version, where))
    elif use.comment_at is not None:
        edits.append(Edit(use.comment_at, use.comment_at, f" # {word}"))
    else:
        raise PinguardError(f"{where}: `# {shown(word)}` cannot be written after {shown(use.value)!r}: the line goes "
                            "on after it, and a comment there would end it; write `uses:` on a line of its own")
    return edits


def _version_edit(comment: Span, text: str, version: str, where: str) -> list[Edit]:
    """The version of a comment replaced in place, or written in front of a comment that names none."""
    note = read_version(text)
    if note is None:
        return [Edit(comment.start, comment.start, f"# {version_word(version)} ")]
    if note.ref == version:
        return []
    written = version_word(version) if note.bare else version  # after `tag=` or `ratchet:…@`, any ref reads back
    again = read_version(text[:note.start] + written + text[note.end:])
    if again is None or again.ref != version:
        raise PinguardError(f"{where}: {shown(version)!r} written into the comment {shown(text)!r} would not read "
                            "back as its version")
    return [Edit(comment.start + note.start, comment.start + note.end, written)]


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
