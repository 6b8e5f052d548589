"""A lock entry's claims held against its image's bytes: unit tests of `claims`, then `verify`, `lock` and
`update` against a real registry with a lockfile edited by hand."""
from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.claims import Claims, held_against
from pinguard.lock.lockfile import LockEntry
from pinguard.registry.manifest import DOCKER_LIST, DOCKER_MANIFEST, OCI_MANIFEST, ManifestBody, Platform
from testing.fake_registry import FakeRegistry, serve_manifests
from testing.images import Manifest, image, multi_platform
from testing.seed import REPOSITORY, platform_digests
from tests.conftest import UNPACED, SeededRegistry

SINGLE, INDEX = image(seed="claims-single"), multi_platform("claims-index")  # linux/amd64; linux/amd64 and arm64
EEE = "sha256:" + "e" * 64


def _entry(manifest: Manifest, **changes: Any) -> LockEntry:
    """The honest entry of `manifest`, with `changes` made by hand."""
    entry = LockEntry(name="registry.example/claims", tag="v1", digest=manifest.digest,
                      media_type=manifest.media_type, size=len(manifest.data), tag_kind="moving", frozen_tag=None,
                      resolved_at="2026-11-30T05:00:00Z", platforms=platform_digests(manifest))
    return replace(entry, **changes)


AMD64_PLATFORM = Platform("linux", "amd64")


def _body(manifest: Manifest) -> ManifestBody:
    return ManifestBody(manifest.data, manifest.digest, manifest.media_type)


def _held(entry: LockEntry, manifest: Manifest, platform: Platform = AMD64_PLATFORM) -> Claims:
    return held_against(entry, _body(manifest), lambda _: platform)


@pytest.mark.parametrize("manifest", [SINGLE, INDEX], ids=["image", "index"])
def test_an_honest_entry_is_backed_by_its_bytes(manifest: Manifest) -> None:
    assert _held(_entry(manifest), manifest) == Claims(_entry(manifest))


def test_an_index_never_reads_a_config() -> None:
    def no_config(body: ManifestBody) -> Platform:
        raise AssertionError("an index's platforms are its own")
    assert held_against(_entry(INDEX), _body(INDEX), no_config).differences == ()


AMD64, ARM64 = (platform_digests(INDEX)[key] for key in ("linux/amd64", "linux/arm64"))


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"platforms": {**platform_digests(INDEX), "linux/s390x": EEE}},
         f'platforms."linux/s390x": the lock says {EEE}, the index lists no linux/s390x image'),
        ({"platforms": {"linux/amd64": EEE, "linux/arm64": ARM64}},
         f'platforms."linux/amd64": the lock says {EEE}, the index lists {AMD64}'),
        ({"platforms": {"linux/amd64": AMD64}},
         f'platforms."linux/arm64": the lock leaves it out, the index lists {ARM64}'),
        ({"media_type": DOCKER_LIST}, f"media_type: the lock says {DOCKER_LIST}, the bytes are {INDEX.media_type}"),
        ({"size": len(INDEX.data) + 1}, f"size: the lock says {len(INDEX.data) + 1}, the bytes are {len(INDEX.data)}"),
    ],
    ids=["platform-added", "platform-digest", "platform-removed", "media-type", "size"],
)
def test_each_claim_the_index_contradicts_is_a_line_naming_its_field(changes: dict[str, Any], line: str) -> None:
    assert _held(_entry(INDEX, **changes), INDEX) == Claims(_entry(INDEX), (line,))


def test_a_single_image_is_the_platform_its_config_names() -> None:
    renamed = _entry(SINGLE, platforms={"linux/arm64": SINGLE.digest})
    assert _held(renamed, SINGLE) == Claims(_entry(SINGLE), (
        'platforms."linux/amd64": the lock leaves it out, the image is linux/amd64',
        f'platforms."linux/arm64": the lock says {SINGLE.digest}, the image is linux/amd64'))
    variant = _held(_entry(SINGLE), SINGLE, Platform("linux", "arm", "v7"))
    assert variant.entry.platforms == {"linux/arm/v7": SINGLE.digest}


def test_bytes_that_declare_no_media_type_take_the_locks_where_their_shape_admits_it() -> None:
    document = json.loads(SINGLE.data)
    del document["mediaType"]
    bare = Manifest(OCI_MANIFEST, json.dumps(document).encode(), SINGLE.blobs)
    assert _held(_entry(bare, media_type=DOCKER_MANIFEST), bare).differences == ()  # the bytes cannot tell
    assert _held(_entry(bare, media_type=DOCKER_LIST, platforms={}), bare).differences[0] == (
        f"media_type: the lock says {DOCKER_LIST}, the bytes are {OCI_MANIFEST}")


def test_a_frozen_tag_pointing_elsewhere_is_replaced_by_the_one_found() -> None:
    claims = Claims(_entry(INDEX, frozen_tag="v1.0.1"))
    assert claims.with_frozen_tag(EEE, "v1.0.2") == Claims(_entry(INDEX, frozen_tag="v1.0.2"), (
        f"frozen_tag: the lock says v1.0.1, it points to {EEE}; v1.0.2 serves the locked digest",))
    assert claims.with_frozen_tag(None, None) == Claims(_entry(INDEX), (
        "frozen_tag: the lock says v1.0.1, the registry no longer serves it",))
    assert claims.with_frozen_tag(None, None).corrections == [
        "registry.example/claims:v1: frozen_tag: the lock says v1.0.1, the registry no longer serves it; corrected"]


def test_a_huge_platform_in_the_lock_is_said_within_bounds() -> None:
    huge = "linux/" + "x" * 100_000
    [line] = _held(_entry(SINGLE, platforms={huge: SINGLE.digest}, frozen_tag=None), SINGLE).differences[1:]
    assert line.endswith("the image is linux/amd64") and len(line) < 1000


def test_a_second_lock_holds_kept_entries_against_cached_bytes_for_no_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text("kind: Pod\nspec:\n  containers:\n  - image: ghcr.io/acme/trainer:1.0\n")
    served = {"1.0": (SINGLE.media_type, SINGLE.data)}
    with FakeRegistry(serve_manifests("acme/trainer", served, blobs={b.digest: b.data for b in SINGLE.blobs})) as fake:
        def lock() -> int:
            env = {"HOME": str(tmp_path / "home"), "PINGUARD_CACHE_DIR": str(tmp_path / "cache")}
            return main(["lock", "--mirror", f"ghcr.io={fake.url}"], env=env, stdout=io.StringIO(),
                        stderr=io.StringIO())
        assert lock() == 0
        asked = len(fake.requests)
        before = (tmp_path / "pinguard.lock").read_bytes()
        assert lock() == 0
        assert fake.requests[asked:] == [] and (tmp_path / "pinguard.lock").read_bytes() == before


# --- against a real registry ---

DLC = f"public.ecr.aws/{REPOSITORY}"
MULTI, CPU = (DLC, "multi-v1"), (DLC, "train-ml-cpu-v1.1")  # an index; a single image whose frozen tag is known


def _run(seeded: SeededRegistry, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    flags = ["--mirror", f"public.ecr.aws={seeded.registry.url}", "--ca-file", str(seeded.registry.ca_file), *UNPACED]
    env = {"HOME": str(tmp_path / "home"), "PINGUARD_CACHE_DIR": str(tmp_path / "cache")}
    status = main([*args, *flags], env=env, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def locked(token_registry: SeededRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tree referencing MULTI and CPU, locked honestly."""
    work = tmp_path / "tree"
    work.mkdir()
    images = "".join(f"  - image: {name}:{tag}\n" for name, tag in (MULTI, CPU))
    (work / "pod.yaml").write_text(f"kind: Pod\nspec:\n  containers:\n{images}")
    monkeypatch.chdir(work)
    assert _run(token_registry, tmp_path, "lock")[0] == 0
    return work / "pinguard.lock"


def _edit(path: Path, key: tuple[str, str], **changes: Any) -> LockEntry:
    """The entry of `key` changed by hand in the lockfile; the honest one returned."""
    lock = lockfile.read(path)
    honest = lock.get(*key)
    assert honest is not None
    lockfile.write(path, lock.with_entries([replace(honest, **changes)]))
    return honest


Edit = Callable[[LockEntry], dict[str, Any]]

EDITS: list[tuple[str, tuple[str, str], Edit, str]] = [
    ("platform-added", MULTI, lambda e: {"platforms": {**e.platforms, "linux/s390x": EEE}},
     f'platforms."linux/s390x": the lock says {EEE}, the index lists no linux/s390x image'),
    ("platform-digest", MULTI, lambda e: {"platforms": {**e.platforms, "linux/arm64": EEE}},
     f'platforms."linux/arm64": the lock says {EEE}, the index lists sha256:'),
    ("platform-removed", MULTI, lambda e: {"platforms": {"linux/amd64": e.platforms["linux/amd64"]}},
     'platforms."linux/arm64": the lock leaves it out, the index lists sha256:'),
    ("media-type", MULTI, lambda e: {"media_type": DOCKER_LIST},
     f"media_type: the lock says {DOCKER_LIST}, the bytes are"),
    ("size", MULTI, lambda e: {"size": e.size + 1}, "size: the lock says "),
    ("image-platform", CPU, lambda e: {"platforms": {"linux/arm64": e.digest}},
     'platforms."linux/arm64": the lock says sha256:'),
    ("frozen-tag", CPU, lambda e: {"frozen_tag": "train-ml-cuda-v1.1.0"},
     "frozen_tag: the lock says train-ml-cuda-v1.1.0, it points to sha256:"),
]


@pytest.mark.registry
@pytest.mark.parametrize(("key", "edit", "line"), [edit[1:] for edit in EDITS], ids=[edit[0] for edit in EDITS])
def test_verify_names_the_field_and_lock_corrects_it(token_registry: SeededRegistry, tmp_path: Path, locked: Path,
                                                     key: tuple[str, str], edit: Edit, line: str) -> None:
    honest_text = locked.read_bytes()
    honest = lockfile.read(locked).get(*key)
    assert honest is not None
    _edit(locked, key, **edit(honest))
    edited = locked.read_bytes()

    status, out, err = _run(token_registry, tmp_path, "verify")
    said = [said.split(": ", 1)[1] for said in out.splitlines() if said.lstrip().startswith(f"{key[0]}:{key[1]}: ")]
    assert (status, err) == (1, "") and any(found.startswith(line) for found in said), out
    status, out, _ = _run(token_registry, tmp_path, "verify", "--format", "json")
    contradicted = {(e["name"], e["tag"]): e["contradicted"] for e in json.loads(out)["entries"]}
    assert status == 1 and contradicted[key] == said and contradicted[MULTI if key == CPU else CPU] == []
    assert locked.read_bytes() == edited  # verify writes nothing

    status, out, err = _run(token_registry, tmp_path, "lock")
    assert status == 0  # a warning naming each field verify named
    assert err.splitlines() == [f"pinguard: warning: {key[0]}:{key[1]}: {found}; corrected" for found in said]
    assert locked.read_bytes() == honest_text  # corrected to what the bytes say, and nothing else changed
    assert _run(token_registry, tmp_path, "lock") == (0, out, "") and locked.read_bytes() == honest_text
    assert _run(token_registry, tmp_path, "verify")[0] == 0


@pytest.mark.registry
def test_lock_reads_kept_entries_from_the_cache_first(token_registry: SeededRegistry, tmp_path: Path,
                                                      locked: Path) -> None:
    """With the cache gone, kept entries are fetched by digest: the same corrections, from the registry."""
    honest_text = locked.read_bytes()
    honest = _edit(locked, MULTI, size=1)
    cache = tmp_path / "cache"
    for path in sorted(cache.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    status, _, err = _run(token_registry, tmp_path, "lock")
    assert (status, err) == (0, f"pinguard: warning: {DLC}:multi-v1: size: the lock says 1, the bytes are "
                                f"{honest.size}; corrected\n")
    assert locked.read_bytes() == honest_text


@pytest.mark.registry
def test_lock_that_cannot_read_a_kept_entry_leaves_the_lockfile_byte_identical(
        token_registry: SeededRegistry, tmp_path: Path, locked: Path) -> None:
    _edit(locked, MULTI, digest=EEE, platforms={"linux/amd64": "sha256:" + "d" * 64})  # a digest never served
    edited = locked.read_bytes()
    status, _, err = _run(token_registry, tmp_path, "lock")
    assert status == 2 and f"{DLC}:multi-v1: " in err and f"{EEE} not found" in err
    assert "pinguard.lock left unchanged" in err and locked.read_bytes() == edited


@pytest.mark.registry
def test_update_carries_no_contradicted_field_forward(token_registry: SeededRegistry, tmp_path: Path,
                                                      locked: Path) -> None:
    honest_text = locked.read_bytes()
    honest = _edit(locked, CPU, frozen_tag="train-ml-cuda-v1.1.0", size=1)
    status, out, err = _run(token_registry, tmp_path, "update")
    assert (status, out) == (0, "nothing to update: no moving tag has moved\n")
    assert err.splitlines() == [
        f"pinguard: warning: {DLC}:train-ml-cpu-v1.1: size: the lock says 1, the bytes are {honest.size}; corrected",
        f"pinguard: warning: {DLC}:train-ml-cpu-v1.1: frozen_tag: the lock says train-ml-cuda-v1.1.0, it points to "
        f"{token_registry.seeded.tags['train-ml-cuda-v1.1.0']}; train-ml-cpu-v1.1.0 serves the locked digest; "
        "corrected"]
    assert locked.read_bytes() == honest_text
