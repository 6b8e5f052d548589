"""A content-addressed store of manifest bodies on disk.

Bodies live under their digest and are hashed again when read, so a damaged
or tampered file is a miss, never a wrong answer. Beside them, the last auth
challenge of each registry, so a warm run asks for its token straight away
instead of collecting a 401 first; a stale one only costs that 401.
"""
from __future__ import annotations

import json
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


class ManifestCache:
    def __init__(self, root: Path | None) -> None:
        self._root = root

    def _path(self, digest: str) -> Path | None:
        if self._root is None:
            return None
        algorithm, _, hex_part = digest.partition(":")
        return self._root / "manifests" / algorithm / hex_part

    def get(self, digest: str) -> bytes | None:
        path = self._path(digest)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if digest_of(data, digest.partition(":")[0]) != digest:
            path.unlink(missing_ok=True)
            return None
        return data

    def put(self, digest: str, data: bytes) -> None:
        path = self._path(digest)
        if path is None or path.exists():
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes(path, data, mode=0o644)
        except OSError:
            pass  # a cache that cannot be written only costs a GET next time

    def challenge(self, base_url: str) -> Challenge | None:
        path = self._challenge_path(base_url)
        if path is None:
            return None
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            return Challenge(str(saved["scheme"]), {str(k): str(v) for k, v in saved["params"].items()})
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def remember_challenge(self, base_url: str, challenge: Challenge) -> None:
        path = self._challenge_path(base_url)
        if path is None:
            return
        data = json.dumps({"scheme": challenge.scheme, "params": challenge.params}, sort_keys=True)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes(path, data.encode(), mode=0o644)
        except OSError:
            pass

    def _challenge_path(self, base_url: str) -> Path | None:
        if self._root is None:
            return None
        return self._root / "challenges" / sha256_digest(base_url.encode()).partition(":")[2]
