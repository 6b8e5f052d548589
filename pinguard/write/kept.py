"""What a tool made (Helm's renders, kustomize's builds): made once a run, kept between runs under the hash
of what made it.

A text is read back only under its key, so an input changed anywhere is a miss, never a
stale answer. Each file ends with the sha256 of its text: a damaged or half-written one is
a miss too. A folder that cannot be written only costs the tool's run next time. A failure
is remembered for the run, never kept.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from pinguard.write.atomic import stage

_MAX_FILES = 5000  # files of a tree hashed for a key
_MAX_BYTES = 32 * 1024 * 1024  # bytes of a tree hashed for a key
_SEAL = "\n#pinguard:"


class KeptTexts:
    """Texts by key in `folder`; None: nothing is kept."""

    def __init__(self, folder: Path | None) -> None:
        self._folder = folder
        self._run: dict[str, str | Exception] = {}  # this run's answers, failures included

    def made(self, key: str | None, make: Callable[[], str], failure: type[Exception], *, keep: bool = True) -> str:
        """The text made under `key`: this run's answer (a `failure` raised again), else the one kept, else what
        `make` makes, kept when `keep`. No key (inputs too large to hash): made every time."""
        if key is None:
            return make()
        if key not in self._run:
            kept = self.get(key)
            try:
                self._run[key] = kept if kept is not None else self._made_now(key, make, keep)
            except failure as exc:
                self._run[key] = exc
        answer = self._run[key]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def _made_now(self, key: str, make: Callable[[], str], keep: bool) -> str:
        text = make()
        if keep:
            self.put(key, text)
        return text

    def get(self, key: str) -> str | None:
        if self._folder is None:
            return None
        try:
            data = (self._folder / key).read_bytes()
        except OSError:
            return None
        text, _, check = data.decode("utf-8", "replace").rpartition(_SEAL)
        return text if check == hashlib.sha256(text.encode()).hexdigest() else None

    def put(self, key: str, text: str) -> None:
        if self._folder is None:
            return
        data = f"{text}{_SEAL}{hashlib.sha256(text.encode()).hexdigest()}".encode()
        try:
            self._folder.mkdir(parents=True, exist_ok=True)
            os.replace(stage(self._folder / key, data, sync=False), self._folder / key)
        except OSError:
            pass


def tree_hash(root: Path) -> str | None:
    """The hash of every file below `root` (names and bytes), links followed as the tools follow them; None
    past the bounds (a tree too large to hash: made afresh every time)."""
    digest = hashlib.sha256()
    count = size = 0
    for folder, names, files in os.walk(root, followlinks=True):
        names.sort()
        for name in sorted(files):
            path = Path(folder, name)
            count += 1
            try:
                data = path.read_bytes()
            except OSError:
                return None
            size += len(data)
            if count > _MAX_FILES or size > _MAX_BYTES:
                return None
            digest.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def binary_answer(folder: Path | None, binary: str, ask: Callable[[], str], valid: Callable[[str], object]) -> str:
    """What the binary at `binary` answers `ask` (its version), kept in `folder` under the binary's path, size and
    time of change: asking costs a start of the binary, as much as the work it is then asked to do."""
    try:
        status = os.stat(binary)
    except OSError:
        return ask()
    kept = KeptTexts(folder)
    key = hashlib.sha256(f"{os.path.realpath(binary)}\0{status.st_size}\0{status.st_mtime_ns}".encode()).hexdigest()
    answer = kept.get(key)
    if answer is None or not valid(answer):
        answer = ask()
        kept.put(key, answer)
    return answer
