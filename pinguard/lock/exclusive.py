"""One writer of a lockfile at a time, across processes."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pinguard.lock.lockfile import LockfileError


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for a read-modify-write of the lockfile at `path`.

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
        yield
    finally:
        os.close(fd)  # closing releases the flock
