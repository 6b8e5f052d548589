from __future__ import annotations

from pathlib import Path

from pinguard.registry.cache import ManifestCache
from pinguard.registry.manifest import sha256_digest


def test_round_trip_and_tamper(tmp_path: Path) -> None:
    cache = ManifestCache(tmp_path)
    data = b'{"schemaVersion": 2}'
    digest = sha256_digest(data)
    assert cache.get(digest) is None
    cache.put(digest, data)
    assert cache.get(digest) == data
    stored = tmp_path / "manifests" / "sha256" / digest.split(":")[1]
    stored.write_bytes(b'{"schemaVersion": 3}')
    assert cache.get(digest) is None  # re-hashed on read: a changed file is a miss
    assert not stored.exists()


def test_disabled_cache(tmp_path: Path) -> None:
    cache = ManifestCache(None)
    cache.put(sha256_digest(b"x"), b"x")
    assert cache.get(sha256_digest(b"x")) is None
