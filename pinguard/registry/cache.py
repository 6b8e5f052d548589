"""What pinguard remembers between runs, under `$XDG_CACHE_HOME/pinguard`.

- Content (manifests, configs) under its digest, hashed again when read, so a
  damaged or tampered file is a miss, never a wrong answer.
- The last auth challenge of each registry, so a warm run asks for its token
  straight away instead of collecting a 401 first; a stale one costs that 401.
- The frozen tag found serving a digest: frozen tags do not move, so the
  answer stands, and a warm resolve of a moving tag needs no tag listing.
  That none was found is remembered for a day: a frozen tag pushed later
  for the same digest is rare, and the search costs a request per tag tried.
- The digest each tag pointed to when last asked: only a hint that the tag
  was seen, so that a warm run asks with HEAD, not GET.

Nothing here is trusted beyond what it can prove: content is re-hashed, a
wrong challenge only costs a round trip, and paths are made only from digests
that match the digest grammar. Writes that fail are ignored: a cache
that cannot be written only costs requests next time.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from pinguard import untrusted_json
from pinguard.reference import is_digest, is_tag
from pinguard.registry.challenge import Challenge
from pinguard.registry.manifest import digest_of, sha256_digest
from pinguard.write.atomic import write_bytes

NO_FROZEN_TAG_FOR = 24 * 3600.0  # seconds a "no frozen tag serves this digest" answer stands


def default_cache_dir(env: Mapping[str, str]) -> Path:
    if env.get("PINGUARD_CACHE_DIR"):
        return Path(env["PINGUARD_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "pinguard"


class RegistryCache:
    """On disk under `root` when given; in memory for this run either way."""

    def __init__(self, root: Path | None, clock: Callable[[], float] = time.time) -> None:
        self._root = root
        self._clock = clock
        self._content: dict[str, bytes] = {}
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
        _write(self._path("content", *digest.split(":", 1)), data)

    def challenge(self, base_url: str) -> Challenge | None:
        data = _read(self._path("challenges", _key(base_url)))
        try:
            saved = untrusted_json.loads(data or b"")
            return Challenge(str(saved["scheme"]), {str(k): str(v) for k, v in saved["params"].items()})
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def remember_challenge(self, base_url: str, challenge: Challenge) -> None:
        data = json.dumps({"scheme": challenge.scheme, "params": challenge.params}, sort_keys=True)
        _write(self._path("challenges", _key(base_url)), data.encode(), overwrite=True)

    def frozen_tag(self, name: str, moving: str, digest: str) -> str | None:
        data = _read(self._path("frozen-tags", _key(f"{name}:{moving}@{digest}")))
        text = data.decode("utf-8", "replace") if data else None
        return text if text and is_tag(text) else None  # it goes into the lock: a tag, or nothing

    def remember_frozen_tag(self, name: str, moving: str, digest: str, frozen: str) -> None:
        _write(self._path("frozen-tags", _key(f"{name}:{moving}@{digest}")), frozen.encode())

    def no_frozen_tag(self, name: str, moving: str, digest: str) -> bool:
        """Whether a search for a frozen tag serving `digest` found none, less than a day ago."""
        data = _read(self._path("no-frozen-tag", _key(f"{name}:{moving}@{digest}")))
        try:
            return data is not None and 0 <= self._clock() - float(data) < NO_FROZEN_TAG_FOR
        except ValueError:
            return False

    def remember_no_frozen_tag(self, name: str, moving: str, digest: str) -> None:
        path = self._path("no-frozen-tag", _key(f"{name}:{moving}@{digest}"))
        _write(path, str(self._clock()).encode(), overwrite=True)

    def tag_digest(self, tag_key: str) -> str | None:
        """The digest `registry/repository:tag` pointed to when last asked, if ever."""
        data = _read(self._path("tags", _key(tag_key)))
        text = data.decode("ascii", "replace") if data else None
        return text if text and is_digest(text) else None

    def remember_tag_digest(self, tag_key: str, digest: str) -> None:
        if self.tag_digest(tag_key) != digest:
            _write(self._path("tags", _key(tag_key)), digest.encode(), overwrite=True)

    def _path(self, *parts: str) -> Path | None:
        return None if self._root is None else self._root.joinpath(*parts)


def _key(text: str) -> str:
    return sha256_digest(text.encode()).partition(":")[2]


def _read(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def _write(path: Path | None, data: bytes, *, overwrite: bool = False) -> None:
    if path is None or (path.exists() and not overwrite):
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(path, data, mode=0o644)
    except OSError:
        pass
