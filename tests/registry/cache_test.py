from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from pinguard.registry.cache import JOURNAL, RegistryCache
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


def test_that_a_registry_asks_for_no_credentials_until_it_challenges(tmp_path: Path) -> None:
    RegistryCache(tmp_path).remember_no_credentials_asked("https://r")
    assert RegistryCache(tmp_path).asks_no_credentials("https://r")
    assert RegistryCache(tmp_path).challenge("https://r") is None
    challenge = Challenge("bearer", {"realm": "https://r/token", "service": "r"})
    RegistryCache(tmp_path).remember_challenge("https://r", challenge)
    assert not RegistryCache(tmp_path).asks_no_credentials("https://r")
    assert RegistryCache(tmp_path).challenge("https://r") == challenge


def _facts(count: int) -> dict[str, str]:
    """Tags and the digests they point to: each value says which key it belongs to."""
    return {f"r/a:v{n}": sha256_digest(f"v{n}".encode()) for n in range(count)}


def test_a_journal_cut_anywhere_yields_each_fact_whole_or_not_at_all(tmp_path: Path) -> None:
    facts = _facts(4)
    written = RegistryCache(tmp_path / "whole")
    for key, digest in facts.items():
        written.remember_tag_digest(key, digest)
    written.close()
    journal = (tmp_path / "whole" / JOURNAL).read_bytes()
    ends = [at for at, byte in enumerate(journal) if byte == ord("\n")]
    cut = tmp_path / "cut"
    cut.mkdir()
    for length in range(len(journal) + 1):
        (cut / JOURNAL).write_bytes(journal[:length])
        read = RegistryCache(cut)
        found = {key: read.tag_digest(key) for key in facts}
        assert all(found[key] in (None, digest) for key, digest in facts.items()), length
        whole = sum(end <= length for end in ends)  # lines present up to their last character
        assert sum(value is not None for value in found.values()) == whole


def test_a_damaged_line_is_skipped_and_the_next_run_appends_after_it(tmp_path: Path) -> None:
    facts = _facts(3)
    cache = RegistryCache(tmp_path)
    for key, digest in facts.items():
        cache.remember_tag_digest(key, digest)
    cache.close()
    journal = tmp_path / JOURNAL
    lines = journal.read_bytes().splitlines(keepends=True)
    damaged = lines[1].replace(b"sha256:", b"sha256:f", 1)  # a digest no run wrote, checksum unchanged
    journal.write_bytes(lines[0] + damaged + lines[2][:20])  # the last line cut short, without its newline
    again = RegistryCache(tmp_path)
    assert [again.tag_digest(key) for key in facts] == [facts["r/a:v0"], None, None]
    again.remember_tag_digest("r/a:v2", facts["r/a:v2"])
    again.close()
    assert [RegistryCache(tmp_path).tag_digest(key) for key in facts] == [facts["r/a:v0"], None, facts["r/a:v2"]]


def test_a_journal_of_mostly_superseded_lines_is_rewritten_on_close(tmp_path: Path) -> None:
    cache = RegistryCache(tmp_path, clock=lambda: 1000.0)
    for round_ in range(3):
        for key in _facts(600):
            cache.remember_tag_digest(key, sha256_digest(f"{key}-{round_}".encode()))
    cache.close()
    assert (tmp_path / JOURNAL).read_bytes().count(b"\n") == 600
    assert RegistryCache(tmp_path).tag_digest("r/a:v7") == sha256_digest(b"r/a:v7-2")


_WRITER = """
import sys
from pathlib import Path
sys.path[:0] = [sys.argv[2]]
from pinguard.registry.cache import RegistryCache
from pinguard.registry.manifest import sha256_digest
cache = RegistryCache(Path(sys.argv[1]))
n = 0
while True:
    key = f"r/a:v{n}"
    cache.remember_tag_digest(key, sha256_digest(key.encode()))
    cache.remember_frozen_tag("r/a", f"v{n}", sha256_digest(key.encode()), f"v{n}.0")
    data = key.encode() * 500
    cache.put(sha256_digest(data), data)
    n += 1
    if n == 200:
        print("ready", flush=True)
"""


def test_a_run_killed_while_writing_leaves_no_wrong_answer(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(root), str(Path(__file__).parents[2])],
                              stdout=subprocess.PIPE)
    assert writer.stdout is not None and writer.stdout.readline() == b"ready\n"
    time.sleep(0.2)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    cache = RegistryCache(root)
    found = 0
    for n in range(1_000_000):
        key = f"r/a:v{n}"
        digest = cache.tag_digest(key)
        if digest is None:
            break
        assert digest == sha256_digest(key.encode())
        assert cache.frozen_tag("r/a", f"v{n}", digest) in (None, f"v{n}.0")
        found += 1
    assert found >= 200
    for stored in (root / "content" / "sha256").iterdir():
        if not stored.name.startswith("."):  # a write cut short stays a temporary file, never read
            assert sha256_digest(stored.read_bytes()) == "sha256:" + stored.name
