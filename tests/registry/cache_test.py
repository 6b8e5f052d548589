from __future__ import annotations

from pathlib import Path

from pinguard.registry.cache import RegistryCache
from pinguard.registry.challenge import Challenge
from pinguard.registry.manifest import sha256_digest

DATA = b'{"schemaVersion": 2}'
DIGEST = sha256_digest(DATA)


def test_content_survives_the_run_and_tampering_is_a_miss(tmp_path: Path) -> None:
    RegistryCache(tmp_path).put(DIGEST, DATA)
    assert RegistryCache(tmp_path).get(DIGEST) == DATA
    stored = tmp_path / "content" / "sha256" / DIGEST.split(":")[1]
    stored.write_bytes(b'{"schemaVersion": 3}')
    assert RegistryCache(tmp_path).get(DIGEST) is None  # re-hashed on read
    assert not stored.exists()


def test_without_a_folder_content_is_kept_for_the_run_only(tmp_path: Path) -> None:
    cache = RegistryCache(None)
    assert cache.get(DIGEST) is None
    cache.put(DIGEST, DATA)
    assert cache.get(DIGEST) == DATA
    assert RegistryCache(None).get(DIGEST) is None


def test_challenge_is_replaced_when_it_changes(tmp_path: Path) -> None:
    first = Challenge("bearer", {"realm": "https://a/token", "service": "a"})
    second = Challenge("bearer", {"realm": "https://b/token", "service": "b"})
    RegistryCache(tmp_path).remember_challenge("https://r", first)
    RegistryCache(tmp_path).remember_challenge("https://r", second)
    assert RegistryCache(tmp_path).challenge("https://r") == second
    assert RegistryCache(tmp_path).challenge("https://other") is None


def test_frozen_tag_by_name_and_digest(tmp_path: Path) -> None:
    RegistryCache(tmp_path).remember_frozen_tag("r/a", "v1.1", DIGEST, "v1.1.2")
    assert RegistryCache(tmp_path).frozen_tag("r/a", "v1.1", DIGEST) == "v1.1.2"
    assert RegistryCache(tmp_path).frozen_tag("r/a", "latest", DIGEST) is None
    assert RegistryCache(tmp_path).frozen_tag("r/b", "v1.1", DIGEST) is None


def test_what_the_cache_holds_is_checked_before_use(tmp_path: Path) -> None:
    cache = RegistryCache(tmp_path)
    cache.remember_frozen_tag("r/a", "v1.1", DIGEST, "v1.1.2\n../../etc")
    assert cache.frozen_tag("r/a", "v1.1", DIGEST) is None  # not a tag: never reaches the lock
    cache.remember_tag_digest("r/a:v1", "sha256:../../x")
    assert cache.tag_digest("r/a:v1") is None
    outside = tmp_path.parent / "outside"
    outside.write_bytes(b"keep")
    cache.put("sha256:../../outside", b"other")
    assert cache.get("sha256:../../outside") is None
    assert outside.read_bytes() == b"keep"
