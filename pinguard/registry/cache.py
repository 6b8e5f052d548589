"""What pinguard remembers between runs, under `$XDG_CACHE_HOME/pinguard`.

- Content (manifests, configs) in a file per digest, hashed again when read, so a
  damaged or tampered file is a miss, never a wrong answer.
- Facts, in one append-only journal (`facts.log`), a line each:
  - the last auth challenge of each registry, or that it asks for no credentials,
    so a warm run sends its first requests together instead of learning that
    from one of them; a stale one costs a round trip;
  - the frozen tag found serving a digest: frozen tags do not move, so the
    answer stands, and a warm resolve of a moving tag needs no tag listing.
    That none was found is remembered for a day: a frozen tag pushed later
    for the same digest is rare, and the search costs a request per tag tried;
  - the digest each tag pointed to when last asked: only a hint that the tag
    was seen, so that a warm run asks with HEAD, not GET.

Nothing is synced to disk while a run works: a content file appears by rename,
whole or not at all, and each journal line is one append carrying a checksum
of itself, so a line cut short (a run killed, a disk full) is skipped when
read, never taken for another answer. `close` syncs what the run appended,
once, and rewrites the journal when it has grown to hold mostly superseded
lines. Writes that fail are ignored: a cache that cannot be written only
costs requests next time.
"""
from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from pinguard import untrusted_json
from pinguard.reference import is_digest, is_tag
from pinguard.registry.challenge import Challenge
from pinguard.registry.manifest import digest_of, sha256_digest
from pinguard.write.atomic import stage, write_bytes

NO_FROZEN_TAG_FOR = 24 * 3600.0  # seconds a "no frozen tag serves this digest" answer stands
JOURNAL = "facts.log"
_MAX_VALUE = 4096  # a fact longer than this (a challenge with absurd parameters) is not remembered
_MAX_JOURNAL = 64 * 1024 * 1024  # a journal larger than this is not read (and is rewritten)
_COMPACT_OVER = 1000  # superseded lines always tolerated; past this, only while fewer than the facts
# Kinds of facts; the journal's lines are `CRC KIND KEY VALUE`, KEY a hash of what the fact is about.
_CHALLENGE, _FROZEN, _NO_FROZEN, _TAG = "challenge", "frozen", "no-frozen", "tag"
_NO_CREDENTIALS = "none"  # a challenge fact: the registry answered without asking for any


class RegistryCache:
    """On disk under `root` when given; in memory for this run either way."""

    def __init__(self, root: Path | None, clock: Callable[[], float] = time.time) -> None:
        self._root = root
        self._clock = clock
        self._content: dict[str, bytes] = {}
        self._facts: dict[tuple[str, str], str] | None = None  # read from the journal when first asked
        self._lines = 0  # lines in the journal, superseded ones included
        self._journal: int | None = None  # the journal's file descriptor, opened to append
        self._lock = threading.Lock()

    def get(self, digest: str) -> bytes | None:
        if not is_digest(digest):
            return None
        with self._lock:
            if digest in self._content:
                return self._content[digest]
        path = self._path("content", *digest.split(":", 1))
        data = _read(path)
        if data is None:
            return None
        if digest_of(data, digest.partition(":")[0]) != digest:
            assert path is not None
            path.unlink(missing_ok=True)
            return None
        with self._lock:
            self._content[digest] = data
        return data

    def put(self, digest: str, data: bytes) -> None:
        """Store content already checked against `digest`."""
        if not is_digest(digest):
            return
        with self._lock:
            self._content[digest] = data
        path = self._path("content", *digest.split(":", 1))
        if path is not None and not path.exists():
            with contextlib.suppress(OSError):
                path.parent.mkdir(parents=True, exist_ok=True)
                os.replace(stage(path, data, mode=0o644, sync=False), path)

    def challenge(self, base_url: str) -> Challenge | None:
        text = self._fact(_CHALLENGE, base_url)
        if not text or text == _NO_CREDENTIALS:
            return None
        try:
            saved = untrusted_json.loads(text)
            return Challenge(str(saved["scheme"]), {str(k): str(v) for k, v in saved["params"].items()})
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def remember_challenge(self, base_url: str, challenge: Challenge) -> None:
        data = json.dumps({"scheme": challenge.scheme, "params": challenge.params}, sort_keys=True)
        self._learn(_CHALLENGE, base_url, data)

    def asks_no_credentials(self, base_url: str) -> bool:
        """Whether the registry at `base_url` answered, when last asked, without a challenge."""
        return self._fact(_CHALLENGE, base_url) == _NO_CREDENTIALS

    def remember_no_credentials_asked(self, base_url: str) -> None:
        self._learn(_CHALLENGE, base_url, _NO_CREDENTIALS)

    def frozen_tag(self, name: str, moving: str, digest: str) -> str | None:
        text = self._fact(_FROZEN, f"{name}:{moving}@{digest}")
        return text if text and is_tag(text) else None  # it goes into the lock: a tag, or nothing

    def remember_frozen_tag(self, name: str, moving: str, digest: str, frozen: str) -> None:
        self._learn(_FROZEN, f"{name}:{moving}@{digest}", frozen)

    def no_frozen_tag(self, name: str, moving: str, digest: str) -> bool:
        """Whether a search for a frozen tag serving `digest` found none, less than a day ago."""
        text = self._fact(_NO_FROZEN, f"{name}:{moving}@{digest}")
        try:
            return text is not None and 0 <= self._clock() - float(text) < NO_FROZEN_TAG_FOR
        except ValueError:
            return False

    def remember_no_frozen_tag(self, name: str, moving: str, digest: str) -> None:
        self._learn(_NO_FROZEN, f"{name}:{moving}@{digest}", repr(self._clock()))

    def tag_digest(self, tag_key: str) -> str | None:
        """The digest `registry/repository:tag` pointed to when last asked, if ever."""
        text = self._fact(_TAG, tag_key)
        return text if text and is_digest(text) else None

    def remember_tag_digest(self, tag_key: str, digest: str) -> None:
        self._learn(_TAG, tag_key, digest)

    def close(self) -> None:
        """What this run appended, synced to disk; the journal rewritten when mostly superseded lines."""
        with self._lock:
            if self._journal is not None:
                with contextlib.suppress(OSError):
                    os.fsync(self._journal)
                os.close(self._journal)
                self._journal = None
            if self._facts is not None and self._lines - len(self._facts) > max(_COMPACT_OVER, len(self._facts)):
                self._rewrite(self._facts)

    def _fact(self, kind: str, about: str) -> str | None:
        with self._lock:
            return self._loaded().get((kind, _key(about)))

    def _learn(self, kind: str, about: str, value: str) -> None:
        """Remember `value` for this run, and append it to the journal unless it says nothing new."""
        if "\n" in value or len(value) > _MAX_VALUE:
            return
        key = (kind, _key(about))
        with self._lock:
            facts = self._loaded()
            if facts.get(key) == value:
                return
            facts[key] = value
            self._append(_line(kind, key[1], value))

    def _loaded(self) -> dict[tuple[str, str], str]:
        if self._facts is None:
            self._facts, self._lines = _read_journal(self._path(JOURNAL), self._clock())
        return self._facts

    def _append(self, line: bytes) -> None:
        path = self._path(JOURNAL)
        if path is None:
            return
        try:
            if self._journal is None:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._journal = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
                size = os.fstat(self._journal).st_size
                if size and os.pread(self._journal, 1, size - 1) != b"\n":
                    line = b"\n" + line  # a line cut short ends here, and costs only itself
            os.write(self._journal, line)  # one write: lines of runs appending at once never interleave
            self._lines += 1
        except OSError:
            pass

    def _rewrite(self, facts: dict[tuple[str, str], str]) -> None:
        path = self._path(JOURNAL)
        if path is None:
            return
        data = b"".join(_line(kind, key, value) for (kind, key), value in facts.items())
        with contextlib.suppress(OSError):
            write_bytes(path, data, mode=0o644)
            self._lines = len(facts)

    def _path(self, *parts: str) -> Path | None:
        return None if self._root is None else self._root.joinpath(*parts)


def _key(text: str) -> str:
    return sha256_digest(text.encode()).partition(":")[2]


def _line(kind: str, key: str, value: str) -> bytes:
    body = f"{kind} {key} {value}".encode()
    return b"%08x %s\n" % (zlib.crc32(body), body)


def _read_journal(path: Path | None, now: float) -> tuple[dict[tuple[str, str], str], int]:
    """The facts of the journal, the last line about each winning, and how many lines it has; a line
    whose checksum does not match (one cut short) is skipped, and so is a day-old "no frozen tag"."""
    facts: dict[tuple[str, str], str] = {}
    lines = 0
    try:
        if path is None or path.stat().st_size > _MAX_JOURNAL:
            return facts, 0 if path is None else _COMPACT_OVER * 10
        data = path.read_bytes()
    except OSError:
        return facts, 0
    for line in data.split(b"\n"):
        if not line:
            continue
        lines += 1
        crc, _, body = line.partition(b" ")
        if len(crc) != 8 or crc != b"%08x" % zlib.crc32(body):
            continue
        try:
            kind, key, value = body.decode().split(" ", 2)
        except ValueError:
            continue
        if kind == _NO_FROZEN and not _recent(value, now):
            continue
        facts[(kind, key)] = value
    return facts, lines


def _recent(stamp: str, now: float) -> bool:
    try:
        return 0 <= now - float(stamp) < NO_FROZEN_TAG_FOR
    except ValueError:
        return False


def _read(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None
