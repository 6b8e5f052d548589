"""Span edits, and writing many files so that either all change or none does."""
from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pinguard.atomic import stage
from pinguard.errors import PinguardError
from pinguard.files import TextFile
from pinguard.sources.base import Found


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


def pin_edit(found: Found, digest: str) -> Edit:
    """The edit that pins one reference to `digest`: the digest field, or `name:tag@digest` in place."""
    field = found.digest_field
    if field is not None:
        value = digest.partition(":")[2] if field.hex_only else digest
        return Edit(field.start, field.end, field.prefix + value + field.suffix)
    name_and_tag = found.value.partition("@")[0]
    if found.reference is not None and found.reference.tag is None:
        name_and_tag += ":latest"  # what the lock resolved; written out so the pin reads back to its entry
    return Edit(found.span.start, found.span.end, name_and_tag + "@" + digest)


def apply(text: str, edits: Iterable[Edit]) -> str:
    """`text` with every edit made; edits must not overlap (two of the same place are one)."""
    ordered = sorted(set(edits), key=lambda e: (e.start, e.end))
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


def commit(changes: Sequence[tuple[TextFile, str]], roots: Sequence[Path]) -> None:
    """Write every changed file, or none: new contents go to temporary files first, then all are renamed.

    A file that changed since it was read, or a symlink leading outside `roots`, stops
    everything before anything is written.
    """
    targets = [(_target(file.path, roots), file, text) for file, text in changes]
    for target, file, _ in targets:
        if target.read_bytes() != file.data:
            raise PinguardError(f"{file.path}: changed while pinguard was working; nothing was written")
    staged: list[tuple[str, Path]] = []
    many = len(targets) > 1
    try:
        for target, file, text in targets:
            staged.append((stage(target, file.encode(text), sync=not many), target))
    except OSError as exc:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)
        raise PinguardError(f"cannot write {exc.filename or 'a file'}: {exc.strerror}; nothing was written") from None
    if many:
        os.sync()  # one flush for every staged file, before any rename makes one visible
    for done, (temporary, target) in enumerate(staged):
        try:
            os.replace(temporary, target)
        except OSError as exc:  # renames within a folder do not fail short of a vanished folder
            for left, _ in staged[done:]:
                Path(left).unlink(missing_ok=True)
            written = ", ".join(str(t) for _, t in staged[:done]) or "none"
            raise PinguardError(f"cannot replace {target}: {exc.strerror}; already written: {written}") from None


def _target(path: Path, roots: Sequence[Path]) -> Path:
    real = path.resolve()
    if path.is_symlink() and not any(real.is_relative_to(root.resolve()) for root in roots):
        raise PinguardError(f"{path}: a symlink to {real}, outside the tree being pinned; nothing was written")
    return real


def unified_diff(file: TextFile, text: str) -> list[str]:
    """What writing `text` over `file` would change, as `diff -u` shows it."""
    name = file.path.as_posix()
    lines = difflib.unified_diff(file.text.splitlines(keepends=True), text.splitlines(keepends=True),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    return [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]


def tree_roots(paths: Sequence[str]) -> list[Path]:
    """The trees named on the command line: symlinks may point anywhere inside them, nowhere else."""
    return [Path(p) if Path(p).is_dir() else Path(p).parent for p in paths] or [Path.cwd()]
