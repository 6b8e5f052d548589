"""Bringing the lockfile in line with the files, offline: resolving and kept entries' bytes replaced by tables.

`tests/commands/lock_test.py` and `tests/lock/claims_test.py` run `pinguard lock` against a real registry.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from pinguard.errors import NotFound, PinguardError
from pinguard.lock import lockfile, sync, verify
from pinguard.lock.claims import Claims
from pinguard.lock.lockfile import LockEntry
from pinguard.lock.sync import LockUpdate, sync_lock
from pinguard.provenance.evidence import Evidence
from pinguard.provenance.trust import Trust
from pinguard.reference import Reference
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import Platform
from pinguard.registry.settings import RegistrySettings
from pinguard.resolve import online
from pinguard.resolve.resolved import Resolved
from pinguard.resolve.settings import OnlineSettings
from pinguard.resolve.tags import TagKind
from pinguard.scan.paths import Scan, scan_paths
from testing.lockdata import lock_for, locked_test_digest

NGINX, REDIS = "docker.io/library/nginx", "docker.io/library/redis"
WRITTEN = "sha256:" + "1" * 64


def _pod(*images: str) -> str:
    return "kind: Pod\nspec:\n  containers:\n" + "".join(f"  - image: {image}\n" for image in images)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _scan(tree: Path, *images: str) -> Scan:
    (tree / "pod.yaml").write_text(_pod(*images))
    return scan_paths(["."])


def _sync(result: Scan) -> LockUpdate:
    return sync_lock(result, Path("pinguard.lock"), OnlineSettings(RegistrySettings(), (Platform("linux", "amd64"),)))


def _resolved(reference: Reference) -> Resolved:
    assert reference.tag is not None
    return Resolved(name=reference.name, tag=reference.tag, digest=locked_test_digest(reference.name, reference.tag),
                    media_type="application/vnd.oci.image.manifest.v1+json", size=0, tag_kind=TagKind.OTHER,
                    frozen_tag=None, resolved_at="2026-11-30T00:00:00Z")


class _Registry:
    """Stands in for `online.resolve_references`: resolves every reference, except those it is told fail."""

    def __init__(self, failing: Sequence[str] = ()) -> None:
        self.failing = failing
        self.asked: list[str] = []
        self.clients: list[RegistryClient | None] = []  # the client each call was handed

    def __call__(self, references: Sequence[Reference], settings: OnlineSettings,
                 client: RegistryClient | None = None) -> dict[Reference, Resolved | PinguardError]:
        self.asked += [str(reference) for reference in references]
        self.clients.append(client)
        return {reference: NotFound(f"{reference.tag} not found") if str(reference) in self.failing
                else _resolved(reference) for reference in references}


class _Bytes:
    """Stands in for `verify.kept_from_bytes`: what the bytes say of each kept entry, by (name, tag)."""

    def __init__(self, said: dict[tuple[str, str], Claims | PinguardError] | None = None) -> None:
        self.said = said or {}
        self.asked: list[tuple[str, str]] = []
        self.clients: list[RegistryClient] = []

    def __call__(self, entries: Sequence[LockEntry], client: RegistryClient,
                 settings: OnlineSettings) -> list[Claims | PinguardError]:
        self.asked += [entry.key for entry in entries]
        self.clients.append(client)
        return [self.said.get(entry.key, Claims(entry)) for entry in entries]


@pytest.fixture(autouse=True)
def backed(monkeypatch: pytest.MonkeyPatch) -> _Bytes:
    """Bytes that back every kept entry, unless a test says otherwise."""
    bytes_say = _Bytes()
    monkeypatch.setattr(verify, "kept_from_bytes", bytes_say)
    return bytes_say


def test_a_lock_its_bytes_back_resolves_nothing_and_stays_byte_identical(tree: Path, backed: _Bytes) -> None:
    result = _scan(tree, "nginx:1.25", "redis")
    lockfile.write(tree / "pinguard.lock", lock_for(result.found))
    before = (tree / "pinguard.lock").stat()
    assert _sync(result) == LockUpdate((), kept=2, dropped=0)
    assert backed.asked == [(NGINX, "1.25"), (REDIS, "latest")]  # each kept entry held against its bytes, once
    after = (tree / "pinguard.lock").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not even rewritten


def test_a_field_the_bytes_contradict_is_corrected_with_a_warning(tree: Path, backed: _Bytes) -> None:
    result = _scan(tree, "nginx:1.25", "redis")
    lockfile.write(tree / "pinguard.lock", lock_for(result.found))
    [nginx, redis] = lockfile.read(tree / "pinguard.lock")
    backed.said[nginx.key] = Claims(replace(nginx, size=1609), ("size: the lock says 0, the bytes are 1609",))
    locked = _sync(result)
    assert locked.warnings == (f"{NGINX}:1.25: size: the lock says 0, the bytes are 1609; corrected",)
    assert list(lockfile.read(tree / "pinguard.lock")) == [replace(nginx, size=1609), redis]


def test_bytes_that_cannot_be_read_leave_the_lockfile_byte_identical(tree: Path, backed: _Bytes) -> None:
    result = _scan(tree, "nginx:1.25", "redis")
    lockfile.write(tree / "pinguard.lock", lock_for(result.found))
    before = (tree / "pinguard.lock").read_bytes()
    backed.said[(REDIS, "latest")] = NotFound("sha256:… not found")
    with pytest.raises(PinguardError) as failed:
        _sync(result)
    assert (failed.value.details, str(failed.value)) == ((f"{REDIS}:latest: sha256:… not found",),
                                                         "pinguard.lock left unchanged")
    assert (tree / "pinguard.lock").read_bytes() == before


def test_with_nothing_kept_no_bytes_are_read(tree: Path, backed: _Bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(online, "resolve_references", _Registry())
    _sync(_scan(tree, "nginx:1.25"))
    assert backed.asked == [] and len(lockfile.read(tree / "pinguard.lock")) == 1


def test_what_is_missing_is_resolved_once_and_locked(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = _Registry()
    monkeypatch.setattr(online, "resolve_references", registry)
    lockfile.write(tree / "pinguard.lock", lock_for(_scan(tree, "nginx:1.25").found))
    result = _scan(tree, "nginx:1.25", "redis", "redis:latest", "busybox:1.36", f"busybox:1.36@{WRITTEN}")

    locked = _sync(result)
    # `redis` is resolved as `redis:latest`; a name:tag also written with a digest is resolved by that digest.
    assert registry.asked == [f"{REDIS}:latest", f"docker.io/library/busybox:1.36@{WRITTEN}"]
    assert (locked.kept, locked.dropped) == (1, 0)
    assert [entry.key for entry in locked.new] == [(REDIS, "latest"), ("docker.io/library/busybox", "1.36")]
    assert [entry.key for entry in lockfile.read(tree / "pinguard.lock")] == [
        ("docker.io/library/busybox", "1.36"), (NGINX, "1.25"), (REDIS, "latest")]


def test_resolving_and_provenance_share_one_client_for_the_run(tree: Path, monkeypatch: pytest.MonkeyPatch,
                                                              backed: _Bytes) -> None:
    """One client per lock run: each registry keeps one pacer (its quota's bucket does not start full again), one
    token and the run one deadline, however many steps reach the registries."""
    registry, opened, looked = _Registry(), [], []
    real_open = online.open_client

    def open_client(settings: OnlineSettings) -> RegistryClient:
        opened.append(real_open(settings))
        return opened[-1]

    def entries_with_evidence(client: RegistryClient, entries: Sequence[LockEntry], trust: Trust,
                              unchanged: str) -> list[LockEntry]:
        looked.append((client, [entry.key for entry in entries]))
        return [replace(entry, evidence=Evidence("2026-11-30T00:00:00Z")) for entry in entries]

    monkeypatch.setattr(online, "resolve_references", registry)
    monkeypatch.setattr(online, "open_client", open_client)
    monkeypatch.setattr(sync, "entries_with_evidence", entries_with_evidence)
    lockfile.write(tree / "pinguard.lock", lock_for(_scan(tree, "nginx:1.25").found))  # locked without provenance
    settings = OnlineSettings(RegistrySettings(), (Platform("linux", "amd64"),), provenance=True)
    sync_lock(_scan(tree, "nginx:1.25", "redis:7.2"), Path("pinguard.lock"), settings)
    assert len(opened) == 1 and registry.clients == opened == backed.clients
    # The new entry came with evidence from resolving (the table gives none here): both are looked at, once.
    assert looked == [(opened[0], [(NGINX, "1.25"), (REDIS, "7.2")])]
    assert all(entry.evidence is not None for entry in lockfile.read(tree / "pinguard.lock"))


def test_entries_no_file_references_are_dropped(tree: Path) -> None:
    lockfile.write(tree / "pinguard.lock", lock_for(_scan(tree, "nginx:1.25", "redis:7.2").found))
    assert _sync(_scan(tree, "nginx:1.25")) == LockUpdate((), kept=1, dropped=1)
    assert [entry.key for entry in lockfile.read(tree / "pinguard.lock")] == [(NGINX, "1.25")]


def test_a_failure_is_reported_and_leaves_the_lockfile_byte_identical(tree: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(online, "resolve_references", _Registry(failing=[f"{REDIS}:7.2"]))
    lockfile.write(tree / "pinguard.lock", lock_for(_scan(tree, "nginx:1.25").found))
    before = (tree / "pinguard.lock").read_bytes()
    with pytest.raises(PinguardError) as failed:
        _sync(_scan(tree, "busybox:1.36", "redis:7.2"))
    assert (failed.value.details, str(failed.value)) == (("redis:7.2: 7.2 not found",), "pinguard.lock left unchanged")
    assert (tree / "pinguard.lock").read_bytes() == before


def test_what_lock_and_pin_say_of_an_update(tree: Path) -> None:
    result = _scan(tree, "nginx:1.25")
    [entry] = lock_for(result.found)
    assert LockUpdate((entry,), kept=2, dropped=1).lines(Path("ci/pinguard.lock")) == [
        f"locked {NGINX}:1.25@{entry.digest}\n", "ci/pinguard.lock: 1 new, 2 kept, 1 dropped\n"]
