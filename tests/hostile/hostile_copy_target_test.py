"""A copy's target that lies (`testing.lying_target`, in front of a real registry): whatever it says, a copy is
recorded only when the target proves it serves every digest, and `verify --copies` (`--deep` where only the
bytes can tell) finds the lie, naming the blob or manifest."""
from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.copy.retarget import parse_destination
from pinguard.copy.verify import verify_copies
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Copy, Lock
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from testing.copying import PACED_AT, SOURCE, World, entry, image_of, layer, two_registries
from testing.images import Manifest
from testing.lying_target import Lies, LyingProxy
from tests.conftest import require_registry_tools

pytestmark = pytest.mark.registry

TRUTH = Lies()
BARE = "HEAD answered 200 without Content-Length or Docker-Content-Digest"


@dataclass(frozen=True)
class Hostile:
    world: World
    liar: LyingProxy
    image: Manifest  # locked as public.ecr.aws/team/a:v1; two layers of one size, one the other could stand for
    lock: Lock

    @property
    def name(self) -> str:
        return f"{SOURCE}/team/a"

    def repository(self, prefix: str) -> str:
        """The copy's repository under `prefix` on the lying target."""
        return parse_destination(f"{self.liar.host}/{prefix}").name_for(self.name).partition("/")[2]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    require_registry_tools()
    with two_registries(tmp_path_factory.mktemp("hostile-copy")) as world, LyingProxy(world.target.url) as liar:
        image = image_of([layer("hostile-base"), layer("hostile-a")], seed="hostile-a")
        world.push("team/a", image, "v1")
        yield Hostile(world, liar, image, Lock().with_entries([entry("team/a", "v1", image)]))


@pytest.fixture
def honest(hostile: Hostile) -> Iterator[Hostile]:
    """The target telling the truth at the start of a test, and again after it."""
    hostile.liar.lies = TRUTH
    yield hostile
    hostile.liar.lies = TRUTH


def pinguard(hostile: Hostile, lockfile_path: Path, *arguments: str) -> tuple[int, str]:
    """The command as a user runs it: its status, and what it wrote (stdout and stderr)."""
    world = hostile.world
    registry = ("--mirror", f"{SOURCE}={world.source_proxy.url}", "--ca-file", str(world.source.ca_file),
                "--rate", f"{SOURCE}={PACED_AT}")
    out, err = io.StringIO(), io.StringIO()
    home = lockfile_path.parent / "home"
    status = main([*arguments, "--lockfile", str(lockfile_path), *registry],
                  env={"HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}, stdout=out, stderr=err)
    return status, out.getvalue() + err.getvalue()


def copied(hostile: Hostile, tmp_path: Path, prefix: str, lies: Lies = TRUTH) -> tuple[int, str, Path, str]:
    """`copy` to `prefix` with the target telling `lies`: its status and output, the lockfile and its bytes before."""
    path = tmp_path / "pinguard.lock"
    if not path.exists():
        lockfile.write(path, hostile.lock)
    before = path.read_text()
    hostile.liar.lies = lies
    status, output = pinguard(hostile, path, "copy", "--to", f"{hostile.liar.host}/{prefix}")
    return status, output, path, before


def recorded(hostile: Hostile, tmp_path: Path, prefix: str) -> Path:
    """A lockfile recording a copy under `prefix`, as one that took the target at its word would have."""
    path = tmp_path / "recorded.lock"
    target = f"{hostile.liar.host}/{hostile.repository(prefix)}"
    locked = entry("team/a", "v1", hostile.image)
    lockfile.write(path, Lock().with_entries([replace(locked, copies=(Copy(target, "2026-12-01T00:00:00Z"),))]))
    return path


def test_an_honest_target_copies_and_verifies_deep(honest: Hostile, tmp_path: Path) -> None:
    status, output, path, _ = copied(honest, tmp_path, "honest")
    assert status == 0, output
    (copy,) = lockfile.read(path).get(honest.name, "v1").copies  # type: ignore[union-attr]
    assert copy.to == f"{honest.liar.host}/{honest.repository('honest')}"
    status, output = pinguard(honest, path, "verify", "--copies", "--deep")
    assert status == 0, output
    assert "1 copy checked: each serves every digest" in output
    told: list[str] = []

    @contextmanager
    def progress(registries: Iterable[str]) -> Iterator[Callable[[str], None]]:
        assert list(registries) == [honest.liar.host] * len(honest.image.blobs)  # a step for each blob
        yield told.append

    home = tmp_path / "home"
    with RegistryClient(honest.world.settings(home), RegistryCache(None)) as client:
        check = verify_copies(client, lockfile.read(path), deep=True, progress=progress)
    assert (check.problems, told) == ([], [honest.liar.host] * len(honest.image.blobs))


def test_a_target_answering_every_blob_head_200_gets_no_copy_recorded(honest: Hostile, tmp_path: Path) -> None:
    status, output, path, before = copied(honest, tmp_path, "bare", Lies(bare_heads=True))
    assert status != 0
    assert path.read_text() == before
    blobs = [blob.digest for blob in honest.image.blobs]
    assert all(f"blob {digest} of manifest {honest.image.digest} is not proven: {BARE}" in output
               for digest in blobs), output

    honest.liar.lies = TRUTH
    assert copied(honest, tmp_path, "kept")[0] == 0
    honest.liar.lies = Lies(bare_heads=True)
    status, output = pinguard(honest, path, "verify", "--copies")
    assert status == 1
    assert f"blob {blobs[-1]} of the image {honest.image.digest} is not proven: {BARE}" in output


@pytest.mark.parametrize("dropped", [frozenset({"manifest"}), frozenset({"blob", "manifest"})],
                         ids=["manifest", "blob-and-manifest"])
def test_a_target_that_answers_a_put_201_without_storing_gets_no_copy_recorded(
        honest: Hostile, tmp_path: Path, dropped: frozenset[str]) -> None:
    prefix = "dropped-" + "-".join(sorted(dropped))
    status, output, path, before = copied(honest, tmp_path, prefix, Lies(dropped=dropped))
    assert status != 0
    assert path.read_text() == before
    assert f"manifest {honest.image.digest} is not served" in output, output
    if "blob" in dropped:
        assert f"blob {honest.image.blobs[-1].digest} of manifest {honest.image.digest} is not proven: " \
               "HEAD answered 404" in output

    honest.liar.lies = TRUTH
    status, output = pinguard(honest, recorded(honest, tmp_path, prefix), "verify", "--copies")
    assert status == 1
    assert f"the image {honest.image.digest} is not served" in output


def test_a_target_serving_another_blobs_bytes_is_caught_by_hashing(honest: Hostile, tmp_path: Path) -> None:
    status, _, path, _ = copied(honest, tmp_path, "swapped")
    assert status == 0
    base, own = (blob.digest for blob in honest.image.blobs[1:])
    honest.liar.lies = Lies(swapped={own: base})  # the HEAD stays true: only the bytes tell
    assert pinguard(honest, path, "verify", "--copies")[0] == 0
    status, output = pinguard(honest, path, "verify", "--copies", "--deep")
    assert status == 1
    target = f"{honest.liar.host}/{honest.repository('swapped')}"
    assert (f"{honest.name}:v1 copied to {target}: blob {own} of the image {honest.image.digest} is served as bytes "
            f"hashing to {base}") in output
    assert sum(line.startswith("copy ") for line in output.splitlines()) == 1  # the other blobs hash true


def test_a_target_redirecting_a_blob_elsewhere_gets_no_copy_recorded(honest: Hostile, tmp_path: Path) -> None:
    base, own = (blob.digest for blob in honest.image.blobs[1:])
    repository = honest.repository("redirected")
    elsewhere = Lies(redirected={own: f"{honest.liar.url}/v2/{repository}/blobs/{base}"})
    status, output, path, before = copied(honest, tmp_path, "redirected", elsewhere)
    assert status != 0
    assert path.read_text() == before
    assert f"blob {own} of manifest {honest.image.digest} is not proven: HEAD answered 200 naming {base}" in output

    honest.liar.lies = TRUTH
    assert copied(honest, tmp_path, "redirected")[0] == 0
    honest.liar.lies = elsewhere
    status, output = pinguard(honest, path, "verify", "--copies", "--deep")
    assert status == 1
    assert f"blob {own} of the image {honest.image.digest} is not proven: HEAD answered 200 naming {base}" in output
