"""Write files so that readers see the old bytes or the new ones, never a mix."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` in one rename, keeping its mode (or `mode`)."""
    temporary = stage(path, data, mode=mode)
    try:
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def stage(path: Path, data: bytes, *, mode: int | None = None, sync: bool = True) -> str:
    """Write `data` to a temporary file beside `path`, ready to be renamed over it.

    The file is synced unless `sync` is false, for callers staging many files that
    sync them all at once before renaming any.
    """
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(temporary, mode)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
