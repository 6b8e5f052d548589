"""The verification engine against a fake registry: one verdict per lock entry, asked anew every time.

`tests/commands/verify_test.py` runs `pinguard verify` against a real registry.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from pinguard.errors import DeadlinePassed, RegistryError
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry, LockfileError
from pinguard.lock.verify import Status, Verdict, deadline_lines, read_lock, verify_entries
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import Platform
from pinguard.resolve.settings import OnlineSettings
from testing.fake_registry import FakeRegistry, Response, Route, serve_manifests
from testing.images import Manifest, image, multi_platform
from testing.seed import platform_digests
from tests.registry.conftest import REGISTRY, settings_for

REPO = "deep-learning-containers/ray"
BEFORE, AFTER = multi_platform("verification-before"), multi_platform("verification-after")
MANIFESTS = rf"/v2/{REPO}/manifests/"


def _entry(tag: str = "v1", image: Manifest = BEFORE) -> LockEntry:
    return LockEntry(name=f"{REGISTRY}/{REPO}", tag=tag, digest=image.digest, media_type=image.media_type,
                     size=len(image.data), tag_kind="moving", frozen_tag=None, resolved_at="2026-11-30T05:00:00Z",
                     platforms=platform_digests(image))


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    with FakeRegistry() as started:
        yield started


def _check(fake: FakeRegistry, tmp_path: Path, entries: Sequence[LockEntry],
           told: list[LockEntry] | None = None) -> list[Verdict]:
    settings = OnlineSettings(settings_for(fake.url, tmp_path), (Platform("linux", "amd64"),))
    with RegistryClient(settings.registry, RegistryCache(tmp_path / "cache")) as client:
        return verify_entries(entries, client, settings, None if told is None else told.append)


def test_a_tag_still_on_its_digest_is_ok_for_one_request_every_time(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(*serve_manifests(REPO, {"v1": (BEFORE.media_type, BEFORE.data)}))
    for _ in range(2):  # the second run shares the first one's cache, and asks again all the same
        [verdict] = _check(fake, tmp_path, [_entry()])
        assert (verdict.status, verdict.current_digest, verdict.message) == (Status.OK, BEFORE.digest, None)
    assert [(r.method, r.bare_path) for r in fake.requests_to(MANIFESTS + ".+")] == [("GET", f"{MANIFESTS}v1")] * 2


def test_an_honest_single_image_costs_its_config_once_and_a_head_of_its_frozen_tag(fake: FakeRegistry,
                                                                                    tmp_path: Path) -> None:
    single = image(seed="verification-single")
    served = (single.media_type, single.data)
    fake.add(*serve_manifests(REPO, {"v1": served, "v1.0.1": served}, blobs={b.digest: b.data for b in single.blobs}))
    entry = replace(_entry(image=single), frozen_tag="v1.0.1")
    for _ in range(2):  # the config, named by its digest, comes from the cache the second time
        [verdict] = _check(fake, tmp_path, [entry])
        assert (verdict.status, verdict.problems, verdict.as_served) == (Status.OK, (), entry)
    config = f"/v2/{REPO}/blobs/{single.document['config']['digest']}"
    tag, frozen = ("GET", f"{MANIFESTS}v1"), ("HEAD", f"{MANIFESTS}v1.0.1")
    assert [(r.method, r.bare_path) for r in fake.requests_to(rf"/v2/{REPO}/.+")] == [
        tag, ("GET", config), frozen, tag, frozen]


def test_a_claim_the_bytes_contradict_is_a_problem_whatever_the_status(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(*serve_manifests(REPO, {"v1": (AFTER.media_type, AFTER.data),
                                     BEFORE.digest: (BEFORE.media_type, BEFORE.data)}))
    lying = _entry(tag="v1", image=BEFORE)
    lying = replace(lying, size=lying.size + 1)
    [verdict] = _check(fake, tmp_path, [lying])
    assert (verdict.status, verdict.problems) == (
        Status.MOVED, (f"size: the lock says {len(BEFORE.data) + 1}, the bytes are {len(BEFORE.data)}",))
    assert verdict.as_served == _entry(image=BEFORE)  # what `update` explains the move from
    assert verdict.to_json()["contradicted"] == list(verdict.problems)


def test_a_moved_tag_names_where_it_points_now(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(*serve_manifests(REPO, {"v1": (AFTER.media_type, AFTER.data), "v1.0.1": (AFTER.media_type, AFTER.data),
                                     BEFORE.digest: (BEFORE.media_type, BEFORE.data)}))
    [verdict] = _check(fake, tmp_path, [_entry()])
    assert verdict.status is Status.MOVED and verdict.current is not None
    assert (verdict.current.digest, verdict.current.frozen_tag) == (AFTER.digest, "v1.0.1")
    assert verdict.message == f"v1 now points to {AFTER.digest}, the same digest as v1.0.1"
    assert verdict.to_json() == {"name": f"{REGISTRY}/{REPO}", "tag": "v1", "digest": BEFORE.digest,
                                 "status": "moved", "current_digest": AFTER.digest, "message": verdict.message,
                                 "provenance": [], "contradicted": []}


@pytest.mark.parametrize(
    ("served", "message"),
    [
        ({"v1": (AFTER.media_type, AFTER.data)}, f"{BEFORE.digest} not found"),
        ({BEFORE.digest: (BEFORE.media_type, BEFORE.data)}, "the digest is still served, but not the tag: "),
    ],
    ids=["digest-gone", "tag-gone"],
)
def test_a_digest_or_tag_no_longer_served_is_missing(fake: FakeRegistry, tmp_path: Path,
                                                    served: dict[str, tuple[str, bytes]], message: str) -> None:
    fake.add(*serve_manifests(REPO, served))
    [verdict] = _check(fake, tmp_path, [_entry()])
    assert (verdict.status, verdict.current_digest) == (Status.MISSING, None)
    assert verdict.message is not None and message in verdict.message


def test_other_bytes_for_the_digest_are_a_mismatch(fake: FakeRegistry, tmp_path: Path) -> None:
    other = Response(200, {"Content-Type": BEFORE.media_type}, BEFORE.data.replace(b"amd64", b"arm64"))
    fake.add(Route("GET", MANIFESTS + BEFORE.digest, other),
             *serve_manifests(REPO, {"v1": (AFTER.media_type, AFTER.data)}))
    [verdict] = _check(fake, tmp_path, [_entry()])
    assert verdict.status is Status.MISMATCH
    assert verdict.message is not None and f"manifest {BEFORE.digest} was served as bytes hashing to" in verdict.message


def test_a_refusal_is_an_error_and_every_entry_keeps_its_place(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(Route("GET", MANIFESTS + "refused", Response(403)),
             *serve_manifests(REPO, {"v1": (BEFORE.media_type, BEFORE.data), "v2": (AFTER.media_type, AFTER.data)}))
    entries = [_entry("v2", AFTER), _entry("refused"), _entry("v1")]
    told: list[LockEntry] = []
    verdicts = _check(fake, tmp_path, entries, told)
    assert [(v.entry, v.status) for v in verdicts] == [
        (entries[0], Status.OK), (entries[1], Status.ERROR), (entries[2], Status.OK)]
    assert isinstance(verdicts[1].error, RegistryError) and "access denied (403)" in str(verdicts[1].message)
    assert sorted(told, key=entries.index) == entries  # progress heard of each entry once


def test_deadline_lines_name_each_registry_cut_short_once() -> None:
    late = [DeadlinePassed(registry, f"{registry}: the run's deadline passed")
            for registry in (REGISTRY, "docker.io", REGISTRY)]
    verdicts = [Verdict(_entry(), Status.ERROR, message=str(error), error=error) for error in late]
    verdicts.append(Verdict(_entry(), Status.ERROR, message="refused", error=RegistryError("refused")))
    assert deadline_lines(verdicts) == [f"{REGISTRY}: the run's deadline passed; 2 of 4 entries left unverified",
                                        "docker.io: the run's deadline passed; 1 of 4 entries left unverified"]


def test_read_lock_wants_a_lockfile(tmp_path: Path) -> None:
    message = f"{tmp_path}/pinguard.lock: not found; run `pinguard lock` first"
    with pytest.raises(LockfileError, match=re.escape(message)):
        read_lock(tmp_path / "pinguard.lock")
    lockfile.write(tmp_path / "pinguard.lock", Lock().with_entries([_entry()]))
    assert list(read_lock(tmp_path / "pinguard.lock")) == [_entry()]
