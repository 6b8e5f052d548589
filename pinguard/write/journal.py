"""The journal that makes a multi-file commit recoverable.

`commit` journals its renames so that a run killed at any point (`kill -9`, a power cut)
leaves a state the next writing run's `recover` repairs. The journal is `.pinguard-journal`
in the deepest folder holding every file written, JSON lines, each step synced before
the next begins:

    {"journal": "pinguard", "version": 1, "token": "1a2b3c4d"}       before any temporary file
    {"target": "k8s/a.yaml", "temporary": "k8s/.a.yaml.1a2b3c4d.tmp", "old": SHA-256, "new": SHA-256}
    {"renaming": 1}                                                  every temporary file written and synced

A journal without its last line is undone (its temporary files deleted: no rename had
begun); one with it is finished (the renames left are done). The run writing a journal
holds an flock on it, so another run leaves a live journal alone. Anything else (a journal
committed to a repository, a hand-edited one) is refused and left for a person, read no
further than its first line `commit` would not write, and not at all past 64 MiB.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pinguard import untrusted_json
from pinguard.errors import PinguardError
from pinguard.write.atomic import TOKEN, temporary_path

JOURNAL = ".pinguard-journal"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_MAX_JOURNAL = 64 << 20  # bytes: the journal of a commit of a few hundred thousand files
_MAX_LINE = 64 << 10  # bytes: two paths of at most PATH_MAX bytes, JSON-escaped, and two digests


@dataclass(frozen=True)
class Entry:
    target: Path  # relative to the journal's folder
    old: str  # SHA-256 of the bytes the rename replaces
    new: str  # SHA-256 of the bytes staged

    def record(self, token: str) -> dict[str, str]:
        return {"target": self.target.as_posix(), "temporary": temporary_path(self.target, token).as_posix(),
                "old": self.old, "new": self.new}


class Journal:
    """The journal of the commit in progress, open and flock-ed until `close`."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def create(cls, root: Path) -> Journal:
        path = root / JOURNAL
        busy = PinguardError(f"{path}: another pinguard is writing this tree, or was killed since this run began "
                             "(run again to repair it); nothing was written")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            raise busy from None
        except OSError as exc:
            raise PinguardError(f"cannot write the journal {path}: {exc.strerror}; nothing was written") from None
        _lock(fd, wait=True)
        if not _still_at(fd, path):  # a `recover` took it for a dead run's between open and lock
            os.close(fd)
            raise busy
        return cls(path, fd)

    def append(self, *records: object) -> None:
        """Write and sync whole lines, unbuffered: nothing is left to flush (and fail) at `close`."""
        data = memoryview(b"".join(json.dumps(record).encode() + b"\n" for record in records))
        try:
            while data:
                data = data[os.write(self._fd, data):]
            os.fsync(self._fd)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None  # named in the message

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)  # while still locked: no other run may take it for a dead run's

    def close(self) -> None:
        os.close(self._fd)


def recover(roots: Sequence[Path]) -> list[str]:
    """Finish or undo the commit a killed run left in any folder holding `roots`; a line for each, for the caller
    to say.

    A writing command calls this before it reads any file. Only files a journal names are
    touched, only inside the journal's folder, and only temporary files named as `stage`
    names them and owned by this user.
    """
    folders = dict.fromkeys(folder for root in roots for folder in (root.resolve(), *root.resolve().parents))
    done: list[str] = []
    for folder in folders:
        path = folder / JOURNAL
        if not os.path.lexists(path):
            continue
        try:
            message = _recover(folder)
        except ValueError as exc:
            raise PinguardError(f"{path}: not a journal pinguard can act on ({exc}); nothing was written: "
                                "look at it, then remove it") from None
        except OSError as exc:
            raise PinguardError(f"{path}: cannot repair the interrupted write it records: "
                                f"{exc.filename or path}: {exc.strerror}") from None
        if message is not None:
            done.append(message)
    return done


def _recover(root: Path) -> str | None:
    """What was done with the journal in `root`: None when it belongs to a live run or is gone."""
    path = root / JOURNAL
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        return f"left {path} alone: a symlink, not a journal pinguard wrote"
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_uid != os.getuid():
            return f"left {path} alone: not a journal this user's pinguard wrote"
        if not _lock(fd, wait=False) or not _still_at(fd, path):
            return None
        if status.st_size > _MAX_JOURNAL:
            raise ValueError(f"{status.st_size} bytes, more than the {_MAX_JOURNAL >> 20} MiB any commit writes")
        token, entries, renaming = _parse(handle)
        for entry in entries:
            folder = (root / entry.target).parent
            if os.path.realpath(folder) != str(folder):
                raise ValueError(f"{folder} leads out of {root} through a symlink")
        message = _roll_forward(root, token, entries) if renaming else _roll_back(root, token, entries)
        path.unlink()
        return message


def _parse(handle: BinaryIO) -> tuple[str, list[Entry], bool]:
    """The token, the entries, and whether renaming began; ValueError for anything `commit` does not write.

    Read a line at a time, each checked as it comes: a hostile journal costs no more than its first bad line.
    A last line without its newline was being written when the run died.
    """
    lines = _lines(handle)
    header = next(lines, b"")
    if not header.endswith(b"\n"):
        return "", [], False
    token = _token(untrusted_json.loads(header))
    entries: list[Entry] = []
    for line in lines:
        if not line.endswith(b"\n"):
            break
        record = untrusted_json.loads(line)
        if isinstance(record, dict) and set(record) == {"renaming"}:
            if record["renaming"] != len(entries) or next(lines, b""):
                raise ValueError("its last line does not count its entries")
            return token, entries, True
        entries.append(_entry(record, token))
    return token, entries, False


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    """The lines of a journal, each with its newline (but a torn last one); ValueError on one too long."""
    while line := handle.readline(_MAX_LINE + 1):
        if len(line) > _MAX_LINE:
            raise ValueError(f"a line longer than the {_MAX_LINE >> 10} KiB any commit writes")
        yield line


def _token(header: object) -> str:
    """The token a journal's first line names."""
    token = header.get("token") if isinstance(header, dict) else None
    if header != {"journal": "pinguard", "version": 1, "token": token} or not isinstance(token, str) \
            or not TOKEN.fullmatch(token):
        raise ValueError("its first line is not a pinguard journal's")
    return token


def _entry(record: object, token: str) -> Entry:
    fields = record if isinstance(record, dict) else {}
    target, old, new = fields.get("target"), fields.get("old"), fields.get("new")
    if not isinstance(target, str) or not _plain_relative(target):
        raise ValueError(f"{target!r} is not a path inside the journal's folder")
    if not (isinstance(old, str) and _SHA256.fullmatch(old) and isinstance(new, str) and _SHA256.fullmatch(new)):
        raise ValueError(f"the entry of {target} has no SHA-256 digests")
    entry = Entry(Path(target), old, new)
    if record != entry.record(token):
        raise ValueError(f"the entry of {target} names another temporary file than pinguard's")
    return entry


def _plain_relative(name: str) -> bool:
    return name not in ("", ".") and "\0" not in name and not os.path.isabs(name) \
        and os.path.normpath(name) == name and ".." not in Path(name).parts


def _roll_forward(root: Path, token: str, entries: list[Entry]) -> str:
    """Rename the temporary files left, over targets still holding the bytes the journal replaces."""
    already, changed = 0, 0
    renamed: set[Path] = set()
    for entry in entries:
        target = root / entry.target
        temporary = temporary_path(target, token)
        if not os.path.lexists(temporary):
            already += 1
        elif not _ours(temporary):
            changed += 1  # not pinguard's after all: not touched
        elif file_digest(target) == entry.old and file_digest(temporary) == entry.new:
            os.replace(temporary, target)
            renamed.add(target.parent)
        else:
            temporary.unlink()
            changed += 1
    sync_folders(renamed)
    left = f", except {changed} changed since, left as they are" if changed else ""
    return (f"finished an interrupted write in {root}: {already} of {len(entries)} files were already renamed; "
            f"renamed the rest{left}")


def _roll_back(root: Path, token: str, entries: list[Entry]) -> str:
    """Delete the temporary files of a commit that had renamed nothing."""
    removed = 0
    for entry in entries:
        temporary = temporary_path(root / entry.target, token)
        if _ours(temporary):
            temporary.unlink()
            removed += 1
    return (f"undid an interrupted write in {root}: removed {removed} temporary file{'s' if removed != 1 else ''}; "
            "no file had been changed")


def _ours(path: Path) -> bool:
    """Whether `path` is a regular file of this user's, as every temporary file `stage` makes."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return False
    return stat.S_ISREG(status.st_mode) and status.st_uid == os.getuid()


def file_digest(path: Path) -> str | None:
    """SHA-256 of the regular file at `path`; None when it is missing or anything else (a symlink, a FIFO)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ELOOP):
            raise
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return hashlib.file_digest(handle, "sha256").hexdigest()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _lock(fd: int, *, wait: bool) -> bool:
    """Take a journal's flock, held while its run lives: a journal nobody holds was left by a killed run."""
    import fcntl  # POSIX only, as in lockfile.exclusive

    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _still_at(fd: int, path: Path) -> bool:
    """Whether `path` still names the file open as `fd`: another run may have removed it meanwhile."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (status.st_dev, status.st_ino) == (mine.st_dev, mine.st_ino)


def sync_folders(folders: set[Path]) -> None:
    """Make new names in `folders` durable: one flush of everything when they are spread out."""
    if len(folders) > 1:
        os.sync()
        return
    for folder in folders:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


