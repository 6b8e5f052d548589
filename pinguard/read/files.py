"""Which files a command reads, and reading them without losing a byte.

Folders inside a git work tree are walked as `git ls-files` lists them
(tracked and untracked, ignored files left out); elsewhere every file below
them, hidden folders skipped. A file's byte-order mark and encoding are
remembered so that writing it back changes only what was edited.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


class UnreadableFile(Exception):
    """A file that is not text pinguard can decode, or cannot be read at all."""


@dataclass(frozen=True)
class TextFile:
    path: Path  # as the user would name it: relative to the current folder when below it
    text: str
    bom: bytes
    codec: str

    @classmethod
    def read(cls, path: Path) -> TextFile:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UnreadableFile(f"cannot read: {exc.strerror or exc}") from None
        bom, codec = next(((b, c) for b, c in _BOMS if data.startswith(b)), (b"", "utf-8"))
        try:
            text = data[len(bom):].decode(codec)
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"not {codec.upper()} text (byte {exc.start + len(bom)} is invalid)") from None
        return cls(path, text, bom, codec)

    @property
    def data(self) -> bytes:
        """The bytes read, to tell whether the file changed before writing it back: made again when asked, as a
        large file's text is held long enough once (every codec decodes strictly, so nothing differs)."""
        return self.encode(self.text)

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.codec)


_WORKFLOWS = ".github"  # the one hidden folder walked outside git: GitHub's workflows and actions live there


def walk(paths: Sequence[str], cwd: Path) -> Iterator[Path]:
    """Every file named or below a named folder, each once, in a stable order."""
    seen: set[Path] = set()
    for argument in paths or ["."]:
        names = sorted(_listed(argument)) if os.path.isdir(argument) else [argument]
        for name in names:
            shown = _relative(name, cwd)
            if shown not in seen:
                seen.add(shown)
                yield shown


def _listed(folder: str) -> list[str]:
    listed = _git_files(folder)
    if listed is not None:
        return listed
    found: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") or d == _WORKFLOWS)
        found.extend(os.path.join(root, name) for name in files)
    return found


def _git_files(folder: str) -> list[str] | None:
    import subprocess  # only where a folder is walked: checking the files named starts no process

    try:
        result = subprocess.run(
            ["git", "-C", folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, check=False, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None  # not a git work tree, or git is missing
    names = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    paths = (os.path.join(folder, name) for name in names if name)
    return [path for path in paths if os.path.isfile(path)]  # deleted files and submodules are listed too


def _relative(name: str, cwd: Path) -> Path:
    """Paths below the current folder are shown relative to it, others as absolute paths."""
    normal = os.path.normpath(name)
    if not os.path.isabs(normal) and not normal.startswith(".."):
        return Path(normal)
    absolute = Path(os.path.normpath(cwd / normal))
    return absolute.relative_to(cwd) if absolute.is_relative_to(cwd) else absolute
