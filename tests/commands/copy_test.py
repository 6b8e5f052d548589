"""`pinguard copy` between two real registries: a source as ECR Public is (TLS, token auth, its quota) and a
plain target, each behind a proxy that counts. What is copied is read back apart from pinguard and hashed."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import requests

from pinguard.commands.copy import copy
from pinguard.copy.ecr import RepositorySettings
from pinguard.copy.transfer import CHUNK
from pinguard.copy.verify import verify_copies
from pinguard.errors import PinguardError
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.resolve.settings import OnlineSettings
from testing.copying import (
    SOURCE,
    World,
    cosign_signature,
    digests,
    entry,
    image_of,
    layer,
    multi_platform_with_artifacts,
    referrers_index,
    referrers_tag,
    sbom_referrer,
    served,
    sha256,
    tags_of,
    two_registries,
)
from testing.fake_boto3 import FakeBoto3
from testing.images import Manifest
from testing.proxy import LatencyProxy
from tests.conftest import require_registry_tools

pytestmark = pytest.mark.registry

ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
BIG = 2 * CHUNK + 12345  # sent in three chunks


@dataclass(frozen=True)
class Seeded:
    world: World
    images: dict[str, Manifest]  # repository -> the image locked there
    lock: Lock
    referrers: dict[str, Manifest]  # tag -> what the source holds there, in team/a


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    require_registry_tools()
    with two_registries(tmp_path_factory.mktemp("copy")) as world:
        base = [layer("base-0", 200_000), layer("base-1", 100_000)]
        images = {
            "team/a": image_of([*base, layer("a")], seed="a"),
            "team/b": image_of([*base, layer("b")], seed="b"),
            "team/multi": multi_platform_with_artifacts(base, "multi"),
            "team/big": image_of([layer("big", BIG)], seed="big"),
        }
        for repository, image in images.items():
            world.push(repository, image, "v1")
        signed = images["team/a"]
        referrers = {referrers_tag(signed.digest) + ".sig": cosign_signature(signed, "team/a"),
                     referrers_tag(signed.digest): referrers_index([sbom_referrer(signed)])}
        for tag, referrer in referrers.items():
            world.push("team/a", referrer, tag)
        lock = Lock().with_entries(entry(repository, "v1", image) for repository, image in images.items())
        yield Seeded(world, images, lock, referrers)


def run(seeded: Seeded, tmp_path: Path, prefix: str, *, lock: Lock | None = None, home: Path | None = None,
        **options: Any) -> tuple[int | PinguardError, str, Path]:
    """`copy` of `lock` (the seeded one by default) under the target's `prefix`: (its status or error, its output,
    the lockfile)."""
    path = tmp_path / "pinguard.lock"
    if not path.exists():
        lockfile.write(path, lock or seeded.lock)
    home = home or tmp_path / "home"
    home.mkdir(exist_ok=True)
    registry = options.pop("registry", None) or seeded.world.settings(home)
    out = io.StringIO()
    seeded.world.target_proxy.reset()
    seeded.world.source_proxy.reset()
    try:
        status: int | PinguardError = copy(path, f"{options.pop('target', seeded.world.target_host)}/{prefix}",
                                           OnlineSettings(registry, (), home / "cache"), stdout=out, **options)
    except PinguardError as exc:
        status = exc
    return status, out.getvalue(), path


def served_whole(base_url: str, repository: str, image: Manifest) -> bool:
    """Whether every manifest and blob of `image` is served under its digest, read and hashed here."""
    for kind, digest in digests(image):
        data = served(base_url, repository, digest, kind)
        if data is None or sha256(data) != digest:
            return False
    return True


def test_every_digest_of_the_lock_is_served_by_the_copy_with_its_referrers(seeded: Seeded, tmp_path: Path) -> None:
    status, out, path = run(seeded, tmp_path, "all", with_referrers=True)
    assert status == 0, status
    target = seeded.world.target.url
    for repository, image in seeded.images.items():
        assert served_whole(target, f"all/{SOURCE}/{repository}", image), repository
        assert tags_of(target, f"all/{SOURCE}/{repository}").get("v1") == image.digest
    signed = tags_of(target, f"all/{SOURCE}/team/a")
    for tag, referrer in seeded.referrers.items():
        assert signed[tag] == referrer.digest  # the cosign signature and the referrers index, under their tags
        assert served_whole(target, f"all/{SOURCE}/team/a", referrer)
    locked = lockfile.read(path)
    for repository in seeded.images:
        (recorded,) = locked.get(f"{SOURCE}/{repository}", "v1").copies  # type: ignore[union-attr]
        assert recorded.to == f"{seeded.world.target_host}/all/{SOURCE}/{repository}"
    lines = out.splitlines()
    assert sorted(line.split(" to ")[0] for line in lines[:-1]) == [
        f"copied {SOURCE}/{repository}:v1" for repository in sorted(seeded.images)]
    assert lines[-1].startswith(f"copied 4 of 4 images to {seeded.world.target_host}/all: ")
    assert seeded.world.source_proxy.throttled == 0  # the source's quota kept to


def test_a_dry_run_writes_nothing(seeded: Seeded, tmp_path: Path) -> None:
    before = lockfile.dumps(seeded.lock)
    status, out, path = run(seeded, tmp_path, "dry", dry_run=True, with_referrers=True)
    assert status == 0
    assert seeded.world.writes_to_target() == []
    assert path.read_text() == before
    assert out.splitlines()[-1].startswith(f"would copy 4 of 4 images to {seeded.world.target_host}/dry: ")
    big = next(line for line in out.splitlines() if "team/big" in line)
    assert f"2 blobs to upload ({(BIG + len(seeded.images['team/big'].blobs[0].data)) / 1e6:.1f} MB)" in big


def reads_of_a_served_copy(seeded: Seeded) -> int:
    """What checking copies the target serves whole takes: a GET of each manifest (hashed), a HEAD of each tag and
    of each blob, in each repository."""
    total = 0
    for repository, image in seeded.images.items():
        referrers = list(seeded.referrers.values()) if repository == "team/a" else []
        total += len({found for manifest in (image, *referrers) for found in digests(manifest)}) + 1 + len(referrers)
    return total


def test_a_second_copy_uploads_nothing_and_reads_each_digest_once(seeded: Seeded, tmp_path: Path) -> None:
    assert run(seeded, tmp_path, "again", with_referrers=True)[0] == 0
    written = (tmp_path / "pinguard.lock").read_text()
    status, out, path = run(seeded, tmp_path, "again", with_referrers=True)
    assert status == 0
    assert seeded.world.writes_to_target() == []
    assert len(seeded.world.target_proxy.arrivals) <= reads_of_a_served_copy(seeded)  # the target proves it all
    assert ": 0 blobs uploaded (0 B), 0 mounted, " in out.splitlines()[-1]
    assert path.read_text() == written  # nothing new: the lock is left as it was


def uploads_of(proxy: LatencyProxy, digest: str) -> int:
    """Blob uploads committed as `digest` (the final PUT names it)."""
    return sum(a.method == "PUT" and f"digest={digest.replace(':', '%3A')}" in a.path for a in proxy.arrivals)


def test_blobs_the_target_holds_elsewhere_are_mounted_not_uploaded(seeded: Seeded, tmp_path: Path) -> None:
    assert run(seeded, tmp_path, "first")[0] == 0
    world = seeded.world
    base = [blob.digest for blob in seeded.images["team/a"].blobs[1:3]]
    assert [uploads_of(world.target_proxy, digest) for digest in base] == [1, 1]  # shared by three images: sent once
    status, out, _ = run(seeded, tmp_path, "second")  # the lock now records copies under first/
    assert status == 0
    assert not any(a.method == "PATCH" or "digest=" in a.path for a in world.target_proxy.arrivals)
    mounts = [a.path for a in world.target_proxy.arrivals if a.method == "POST"]
    assert mounts and all("mount=" in path and "from=first%2F" in path for path in mounts)
    assert ": 0 blobs uploaded (0 B), " in out.splitlines()[-1]
    for repository, image in seeded.images.items():
        assert served_whole(world.target.url, f"second/{SOURCE}/{repository}", image)


def test_a_copy_killed_during_a_large_blob_completes_when_run_again(seeded: Seeded, tmp_path: Path) -> None:
    world = seeded.world
    path = tmp_path / "pinguard.lock"
    lockfile.write(path, seeded.lock.only({(f"{SOURCE}/team/big", "v1")}))
    before = path.read_text()
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    big = seeded.images["team/big"].blobs[1]
    with LatencyProxy(world.target.url, delay=0.3) as slow:  # each chunk takes a while: time to kill it mid-blob
        target = slow.url.removeprefix("http://")
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        process = subprocess.Popen([sys.executable, "-m", "testing.copying", str(path), f"{target}/killed",
                                    world.source_proxy.url, str(world.source.ca_file), str(home)],
                                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not any(a.method == "PATCH" for a in slow.arrivals):
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "no chunk was sent"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
    # Nothing half-written is served.
    assert served(world.target.url, f"killed/{SOURCE}/team/big", big.digest, "blob") is None
    assert path.read_text() == before
    status, _, _ = run(seeded, tmp_path, "killed", home=home)
    assert status == 0
    assert uploads_of(world.target_proxy, big.digest) == 1
    patches = sum(a.method == "PATCH" for a in world.target_proxy.arrivals)
    assert patches <= -(-BIG // CHUNK) - 1  # the rerun sent the large blob once: its chunks but the last
    assert served_whole(world.target.url, f"killed/{SOURCE}/team/big", seeded.images["team/big"])
    assert lockfile.read(path).get(f"{SOURCE}/team/big", "v1").copies  # type: ignore[union-attr]


def delete(base_url: str, repository: str, kind: str, digest: str) -> None:
    response = requests.delete(f"{base_url}/v2/{repository}/{kind}/{digest}", timeout=30)
    assert response.status_code == 202, response.text


def test_verify_copies_catches_a_deleted_copy_and_a_lost_blob(seeded: Seeded, tmp_path: Path) -> None:
    assert run(seeded, tmp_path, "kept")[0] == 0
    locked = lockfile.read(tmp_path / "pinguard.lock")
    home = tmp_path / "home"
    with RegistryClient(seeded.world.settings(home), RegistryCache(None)) as client:
        check = verify_copies(client, locked)
    assert (check.checked, check.problems) == (4, [])
    target, host = seeded.world.target.url, seeded.world.target_host
    delete(target, f"kept/{SOURCE}/team/a", "manifests", seeded.images["team/a"].digest)
    lost = seeded.images["team/b"].blobs[-1].digest
    delete(target, f"kept/{SOURCE}/team/b", "blobs", lost)
    with RegistryClient(seeded.world.settings(home), RegistryCache(None)) as client:
        check = verify_copies(client, locked)
    b = seeded.images["team/b"].digest
    assert check.problems == [
        f"{SOURCE}/team/a:v1 copied to {host}/kept/{SOURCE}/team/a: tag v1 is gone",
        f"{SOURCE}/team/a:v1 copied to {host}/kept/{SOURCE}/team/a: the image {seeded.images['team/a'].digest} is not "
        "served",
        f"{SOURCE}/team/b:v1 copied to {host}/kept/{SOURCE}/team/b: blob {lost} of the image {b} is not proven: "
        "HEAD answered 404",
    ]


def test_an_index_without_its_other_platforms_is_refused_saying_how_to_copy_it(seeded: Seeded,
                                                                                tmp_path: Path) -> None:
    multi = entry("team/multi", "v1", seeded.images["team/multi"])
    amd64_only = replace(multi, platforms={"linux/amd64": multi.platforms["linux/amd64"]})
    status, _, path = run(seeded, tmp_path, "partial", lock=Lock().with_entries([amd64_only]))
    assert isinstance(status, PinguardError)
    (detail,) = status.details
    assert detail.startswith(f"{SOURCE}/team/multi:v1: ") and detail.endswith("copy them too (--all-platforms)")
    assert not lockfile.read(path).get(f"{SOURCE}/team/multi", "v1").copies  # type: ignore[union-attr]
    assert run(seeded, tmp_path, "partial", all_platforms=True)[0] == 0
    assert served_whole(seeded.world.target.url, f"partial/{SOURCE}/team/multi", seeded.images["team/multi"])


def test_an_image_that_fails_fails_the_run_and_the_others_are_recorded(seeded: Seeded, tmp_path: Path) -> None:
    gone = LockEntry(name=f"{SOURCE}/team/gone", tag="v1", digest="sha256:" + "f" * 64,
                     media_type="application/vnd.oci.image.manifest.v1+json", size=1, tag_kind="other",
                     frozen_tag=None, resolved_at="2026-11-30T00:00:00Z", platforms={})
    lock = seeded.lock.only({(f"{SOURCE}/team/a", "v1")}).with_entries([gone])
    status, out, path = run(seeded, tmp_path, "some", lock=lock)
    assert isinstance(status, PinguardError)
    assert str(status) == f"1 of 2 images not copied to {seeded.world.target_host}/some"
    assert status.details[0].startswith(f"{SOURCE}/team/gone:v1: ")
    assert out.splitlines()[-1].startswith(f"copied 1 of 1 images to {seeded.world.target_host}/some: ")
    after = lockfile.read(path)
    assert after.get(f"{SOURCE}/team/a", "v1").copies  # type: ignore[union-attr]
    assert not after.get(f"{SOURCE}/team/gone", "v1").copies  # type: ignore[union-attr]


def test_ecr_repositories_are_created_through_boto3(seeded: Seeded, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeBoto3({("123456789012", f"mirror/{SOURCE}/team/b")})
    monkeypatch.setitem(sys.modules, "boto3", fake)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    world = seeded.world
    settings = world.settings(home, mirrors={SOURCE: world.source_proxy.url, ECR: world.target_proxy.url})
    lock = seeded.lock.only({(f"{SOURCE}/team/a", "v1"), (f"{SOURCE}/team/b", "v1")})
    create = RepositorySettings("IMMUTABLE", scan_on_push=True)
    status, out, _ = run(seeded, tmp_path, "mirror", lock=lock, registry=settings, target=ECR, create=create,
                         dry_run=True)
    assert (status, fake.calls) == (0, [])
    assert out.startswith(f"would create in {ECR} where missing: mirror/{SOURCE}/team/a, mirror/{SOURCE}/team/b\n")
    status, out, path = run(seeded, tmp_path, "mirror", lock=lock, registry=settings, target=ECR, create=create)
    assert status == 0
    assert fake.calls == [("us-east-1", {"registryId": "123456789012", "repositoryName": name,
                                         "imageTagMutability": "IMMUTABLE",
                                         "imageScanningConfiguration": {"scanOnPush": True}})
                          for name in (f"mirror/{SOURCE}/team/a", f"mirror/{SOURCE}/team/b")]
    assert out.startswith(f"created in {ECR}: mirror/{SOURCE}/team/a\n")
    assert served_whole(world.target.url, f"mirror/{SOURCE}/team/a", seeded.images["team/a"])
    assert lockfile.read(path).get(f"{SOURCE}/team/a", "v1").copies[0].to == f"{ECR}/mirror/{SOURCE}/team/a"  # type: ignore[union-attr]


def test_ecr_refusing_to_create_a_repository_stops_the_copy_before_any_write(
        seeded: Seeded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", FakeBoto3(denied=True))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    world = seeded.world
    settings = world.settings(home, mirrors={SOURCE: world.source_proxy.url, ECR: world.target_proxy.url})
    status, _, _ = run(seeded, tmp_path, "denied", registry=settings, target=ECR,
                       create=RepositorySettings())
    assert str(status) == (f"{ECR}/denied/{SOURCE}/team/a: could not create the repository through boto3: "
                           "AccessDeniedException (AccessDeniedException)")
    assert world.writes_to_target() == []


def test_a_copy_within_one_registry_mounts_every_blob_from_the_source(seeded: Seeded, tmp_path: Path) -> None:
    world = seeded.world
    image = seeded.images["team/a"]
    world.target.pusher().push("origin/a", image, "v1")
    host = world.target.host  # the target named directly: the source and the copy in one registry
    locked = replace(entry("team/a", "v1", image), name=f"{host}/origin/a")
    status, out, _ = run(seeded, tmp_path, "inside", lock=Lock().with_entries([locked]), target=host)
    assert status == 0
    kept = f"inside/{host.replace(':', '_')}/origin/a"  # the source registry kept in the name, its port after `_`
    assert f"copied {host}/origin/a:v1 to {host}/{kept}: 0 blobs uploaded (0 B), 4 mounted, 0 skipped" in out
    assert served_whole(world.target.url, kept, image)


def test_two_tags_of_one_image_are_copied_to_an_empty_repository(seeded: Seeded, tmp_path: Path) -> None:
    """Each manifest is sent once, children first, then tagged for each tag: a registry given one manifest by two
    images at once (distribution 2.8) refuses the index over it."""
    world = seeded.world
    multi = seeded.images["team/multi"]
    world.push("team/multi", multi, "v1.0.0")
    both = Lock().with_entries([entry("team/multi", "v1", multi), entry("team/multi", "v1.0.0", multi)])
    status, _, path = run(seeded, tmp_path, "twice", lock=both)
    assert status == 0, status
    puts = [a.path for a in world.target_proxy.arrivals if a.method == "PUT" and "/manifests/" in a.path]
    by_digest = [put for put in puts if "/manifests/sha256:" in put]
    assert by_digest and len(by_digest) == len(set(by_digest))
    assert sorted(put.rpartition("/")[2] for put in puts if put not in by_digest) == ["v1", "v1.0.0"]
    assert tags_of(world.target.url, f"twice/{SOURCE}/team/multi") == {"v1": multi.digest, "v1.0.0": multi.digest}
    assert all(entry.copies for entry in lockfile.read(path))
