"""Write files so that readers see the old bytes or the new ones, never a mix."""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from pinguard.errors import PinguardError

TOKEN = re.compile(r"[0-9a-f]{8}")  # what `new_token` makes: a journal naming any other temporary file is refused


def new_token() -> str:
    return os.urandom(4).hex()  # what secrets.token_hex(4) is, without importing `random` at start-up


def temporary_path(path: Path, token: str) -> Path:
    """Where `stage` writes the new bytes of `path` under `token`: `.NAME.TOKEN.tmp` beside it."""
    return path.with_name(f".{path.name}.{token}.tmp")


def write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` in one rename, keeping its mode (or `mode`)."""
    temporary = stage(path, data, mode=mode)
    try:
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_output(output: Path, data: bytes, what: str) -> None:
    """Write `what` (the report, the YAML) where a command's `--output` says, as the shell's `>` would
    but never half-written; a PinguardError saying why it could not be.

    A regular file, or a new name, is replaced in one rename, so a reader sees the old
    bytes or the new ones; through a symlink that is the file it leads to, and the link
    stays a link. Anything else (a FIFO, `/dev/null`, `/dev/stdout` on a terminal or a
    pipe) is opened and written: a rename would replace the node and the bytes would
    reach no one. A folder is refused.
    """
    try:
        try:
            status: os.stat_result | None = os.stat(output)
        except FileNotFoundError:
            status = None  # a new file, or a dangling symlink: created where the link leads
        if status is not None and stat.S_ISDIR(status.st_mode):
            raise PinguardError(f"{output}: is a folder; --output takes a file name")
        real = Path(os.path.realpath(output))  # through /proc (`/dev/stdout`) it may name a file no longer there
        if status is None or (stat.S_ISREG(status.st_mode) and real.exists() and os.path.samefile(real, output)):
            write_bytes(real, data)
        else:
            with open(output, "wb") as handle:
                handle.write(data)
    except OSError as exc:
        raise PinguardError(f"{output}: cannot write {what}: {exc.strerror or exc}") from None


def stage(path: Path, data: bytes, *, mode: int | None = None, sync: bool = True, token: str | None = None) -> str:
    """Write `data` to a temporary file beside `path`, ready to be renamed over it.

    The file is synced unless `sync` is false, for callers staging many files that
    sync them all at once before renaming any. A caller that must name the file before
    it exists (a journal) passes `token`; the file is `temporary_path(path, token)`.

    The file keeps the mode of `path` (or takes `mode`). A new file is created as the shell's `>`
    creates one, mode 0o666 less what the umask (or the folder's default ACL) takes: the kernel
    applies it as it creates the file, so the umask is never read, and never changed to be read.
    """
    if mode is None:
        mode = _mode(path)
    temporary = str(temporary_path(path, token or new_token()))
    # Never through a link; readable by no one else until its mode is set, unless it is a new file's.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600 if mode is not None else 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


def _mode(path: Path) -> int | None:
    """The permission bits of `path`; None for a new file."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return None
