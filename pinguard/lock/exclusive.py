"""One writer of a lockfile at a time, across processes; what a killed writer left, cleared by the next."""
from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pinguard.lock.lockfile import LockfileError
from pinguard.write.atomic import TOKEN, temporary_path
from pinguard.write.journal import JOURNAL


@contextmanager
def exclusive(path: Path, *, clear: bool = True) -> Iterator[list[str]]:
    """Hold an exclusive lock for a read-modify-write of the lockfile at `path`; yield a line for each new lockfile
    a killed writer left staged beside it (`.pinguard.lock.TOKEN.tmp`), removed unless not `clear` (a dry run),
    for the caller to say.

    The lock is an flock on `.<name>.lck` beside the lockfile, not on the lockfile itself:
    `write` renames a new file over it, and a lock on the old one would guard nothing.
    The sidecar stays: deleting it would let a waiter lock a file no newcomer sees.
    """
    import fcntl  # POSIX only; importing it here keeps `read` working everywhere

    sidecar = path.with_name(f".{path.name}.lck")
    try:
        fd = os.open(sidecar, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise LockfileError(f"{sidecar}: cannot create the lock file: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            raise LockfileError(f"{sidecar}: cannot lock: {exc.strerror or exc}") from None
        yield _clear_staged(path) if clear else []
    finally:
        os.close(fd)  # closing releases the flock


def _clear_staged(path: Path) -> list[str]:
    """Remove the new lockfiles a killed writer staged beside `path`. Holding the lock, no live writer is staging
    one; a journal above it may name one (`update`'s commit), which its `recover` finishes: those are left."""
    folder = path.parent.resolve()
    if any(os.path.lexists(above / JOURNAL) for above in (folder, *folder.parents)):
        return []
    staged = re.compile(re.escape(temporary_path(path, "TOKEN").name).replace("TOKEN", TOKEN.pattern))
    said = []
    try:
        entries = [entry for entry in os.scandir(folder) if staged.fullmatch(entry.name)]
    except OSError:
        return []
    for entry in entries:
        status = entry.stat(follow_symlinks=False)
        if stat.S_ISREG(status.st_mode) and status.st_uid == os.getuid():
            Path(entry.path).unlink(missing_ok=True)
            said.append(f"removed {path.with_name(entry.name)}, a new lockfile a killed run left staged")
    return said
