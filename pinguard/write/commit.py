"""Writing many files so that either all change or none does.

`commit` stages every new file, then renames them all; its journal (`pinguard/write/journal.py`)
lets the next writing run finish or undo a commit that a killed run left midway.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pinguard.errors import PinguardError
from pinguard.read.files import TextFile
from pinguard.write.atomic import new_token, stage
from pinguard.write.journal import Entry, Journal, file_digest, sha256_hex, sync_folders


def commit(changes: Sequence[tuple[TextFile, str]], roots: Sequence[Path]) -> None:
    """Write every changed file, or none: new contents go to temporary files first, then all are renamed.

    A file that changed since it was read, or a symlink leading outside `roots`, stops
    everything before anything is written; one that changes while the commit runs stops it
    before that file's rename, the files renamed before it pinned, none after it. A run
    killed midway leaves a journal (see the module's docstring) that the next `recover`
    finishes or undoes.
    """
    planned = {_target(file.path, roots): (file, text) for file, text in changes}  # a file reached twice is one
    for target, (file, _) in planned.items():
        if file_digest(target) != sha256_hex(file.data):
            raise PinguardError(f"{file.path}: changed while pinguard was working; nothing was written")
    if not planned:
        return
    new = {target: file.encode(text) for target, (file, text) in planned.items()}
    root = Path(os.path.commonpath([*(r.resolve() for r in roots), *(t.parent for t in new)]))
    token = new_token()
    entries = [Entry(t.relative_to(root), sha256_hex(planned[t][0].data), sha256_hex(data)) for t, data in new.items()]
    journal = Journal.create(root)
    try:
        staged = _stage(new, token, journal, entries)
        _rename(staged, journal, {root / entry.target: entry.old for entry in entries})
    finally:
        journal.close()


def _stage(new: dict[Path, bytes], token: str, journal: Journal, entries: list[Entry]) -> list[tuple[str, Path]]:
    """Journal the plan, then write and sync every temporary file; on any failure none is left, nor the journal."""
    staged: list[tuple[str, Path]] = []
    many = len(new) > 1
    try:
        journal.append({"journal": "pinguard", "version": 1, "token": token}, *(e.record(token) for e in entries))
        sync_folders({journal.path.parent})  # the journal's name before any temporary file's
        for target, data in new.items():
            staged.append((stage(target, data, sync=not many, token=token), target))
        if many:
            os.sync()  # one flush for every staged file, before the journal lets any be renamed
        journal.append({"renaming": len(new)})
    except BaseException as exc:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)
        journal.remove()
        if isinstance(exc, OSError):
            what = exc.filename or "a file"
            raise PinguardError(f"cannot write {what}: {exc.strerror}; nothing was written") from None
        raise
    return staged


def _rename(staged: list[tuple[str, Path]], journal: Journal, read: dict[Path, str]) -> None:
    """Rename every temporary file over its target, each only while it still holds the bytes pinguard read (`read`:
    their SHA-256 by target, hashed from the file, never held whole): an
    edit saved meanwhile stops the commit there, nothing further renamed. Interrupted (Ctrl-C), the journal stays
    for `recover`."""
    for done, (temporary, target) in enumerate(staged):
        try:
            changed = file_digest(target) != read[target]  # the last moment before the rename: an editor may save
            if not changed:
                os.replace(temporary, target)
        except OSError as exc:  # renames within a folder do not fail short of a vanished folder
            _abandon(staged, done, journal)
            raise PinguardError(f"cannot replace {target}: {exc.strerror}; {_written(staged, done)}") from None
        if changed:
            _abandon(staged, done, journal)
            raise PinguardError(f"{target}: changed while pinguard was writing, kept as it is now; "
                                f"{_written(staged, done)}; run again to pin the rest")
    sync_folders({target.parent for _, target in staged})  # the renames, before the journal that would redo them
    journal.remove()


def _abandon(staged: list[tuple[str, Path]], done: int, journal: Journal) -> None:
    """Stop a commit midway: the temporary files not yet renamed removed, then the journal."""
    for left, _ in staged[done:]:
        Path(left).unlink(missing_ok=True)
    sync_folders({target.parent for _, target in staged[:done]})
    journal.remove()


def _written(staged: list[tuple[str, Path]], done: int) -> str:
    written = ", ".join(str(target) for _, target in staged[:done]) or "none"
    return f"already written: {written}; not written: {', '.join(str(target) for _, target in staged[done:])}"


def _target(path: Path, roots: Sequence[Path]) -> Path:
    real = path.resolve()
    if path.is_symlink() and not any(real.is_relative_to(root.resolve()) for root in roots):
        raise PinguardError(f"{path}: a symlink to {real}, outside the tree being pinned; nothing was written")
    return real


def tree_roots(paths: Sequence[str]) -> list[Path]:
    """The trees named on the command line: symlinks may point anywhere inside them, nowhere else."""
    return [Path(p) if Path(p).is_dir() else Path(p).parent for p in paths] or [Path.cwd()]
