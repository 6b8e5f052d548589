"""What pinguard remembers between runs, under `$XDG_CACHE_HOME/pinguard`.

- Content (manifests, configs) under its digest, hashed again when read, so a
  damaged or tampered file is a miss, never a wrong answer.
- The last auth challenge of each registry, so a warm run asks for its token
  straight away instead of collecting a 401 first; a stale one costs that 401.
- The frozen tag found serving a digest: frozen tags do not move, so the
  answer stands, and a warm resolve of a moving tag needs no tag listing.

Nothing here is trusted beyond what it can prove: content is re-hashed, and a
wrong challenge only costs a round trip. Writes that fail are ignored: a cache
that cannot be written only costs requests next time.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path

from pinguard.atomic import write_bytes
from pinguard.registry.challenge import Challenge
from pinguard.registry.manifest import digest_of, sha256_digest


def default_cache_dir(env: Mapping[str, str]) -> Path:
    if env.get("PINGUARD_CACHE_DIR"):
        return Path(env["PINGUARD_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "pinguard"


class RegistryCache:
    """On disk under `root` when given; in memory for this run either way."""

    def __init__(self, root: Path | None) -> None:
        self._root = root
        self._content: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def get(self, digest: str) -> bytes | None:
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
        with self._lock:
            self._content[digest] = data
        _write(self._path("content", *digest.split(":", 1)), data)

    def challenge(self, base_url: str) -> Challenge | None:
        data = _read(self._path("challenges", _key(base_url)))
        try:
            saved = json.loads(data or b"")
            return Challenge(str(saved["scheme"]), {str(k): str(v) for k, v in saved["params"].items()})
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def remember_challenge(self, base_url: str, challenge: Challenge) -> None:
        data = json.dumps({"scheme": challenge.scheme, "params": challenge.params}, sort_keys=True)
        _write(self._path("challenges", _key(base_url)), data.encode(), overwrite=True)

    def frozen_tag(self, name: str, moving: str, digest: str) -> str | None:
        data = _read(self._path("frozen-tags", _key(f"{name}:{moving}@{digest}")))
        return data.decode("utf-8", "replace") if data else None

    def remember_frozen_tag(self, name: str, moving: str, digest: str, frozen: str) -> None:
        _write(self._path("frozen-tags", _key(f"{name}:{moving}@{digest}")), frozen.encode())

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
