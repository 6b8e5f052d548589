"""A copy's name, and `pin --to`'s edits: references renamed to their copy, byte for byte, digest unchanged;
what cannot be renamed (no copy recorded, a repository written apart from its tag, two images one name) reported."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pinguard.copy.retarget import Destination, collisions, parse_destination, refuse_collisions, retarget
from pinguard.errors import PinguardError
from pinguard.lock.lockfile import Copy, Lock, LockEntry
from pinguard.scan.paths import scan_paths

ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
MIRROR = Destination(ECR, "mirror")
KEPT = f"{ECR}/mirror/public.ecr.aws"  # where MIRROR puts the copies of public.ecr.aws's images
A, B = "sha256:" + "a" * 64, "sha256:" + "b" * 64


def locked(name: str, digest: str, *copies: str) -> LockEntry:
    return LockEntry(name=name, tag="v1", digest=digest, media_type="application/vnd.oci.image.manifest.v1+json",
                     size=1, tag_kind="other", frozen_tag=None, resolved_at="2026-11-30T00:00:00Z",
                     platforms={"linux/amd64": digest}, copies=tuple(Copy(to, "2026-12-01T00:00:00Z") for to in copies))


LOCK = Lock().with_entries([
    locked("public.ecr.aws/team/a", A, f"{KEPT}/team/a"),
    locked("public.ecr.aws/team/b", B, f"{KEPT}/team/b", "localhost:5000/public.ecr.aws/team/b"),
    locked("public.ecr.aws/team/c", B),  # locked, never copied
])


@pytest.mark.parametrize(("text", "expected"), [
    (ECR, Destination(ECR)),
    (f"{ECR}/mirror/deep", Destination(ECR, "mirror/deep")),
    ("localhost:5000/x", Destination("localhost:5000", "x")),
])
def test_destinations(text: str, expected: Destination) -> None:
    assert parse_destination(text) == expected
    assert str(expected) == text


@pytest.mark.parametrize("text", ["mirror", "mirror/team", f"{ECR}/Mirror", f"{ECR}/m:v1", f"{ECR}/m@{A}", ""])
def test_a_destination_must_start_with_a_registry(text: str) -> None:
    with pytest.raises(PinguardError, match="--to"):
        parse_destination(text)


def test_a_copy_keeps_the_source_registry_and_path_under_the_prefix() -> None:
    assert MIRROR.name_for("public.ecr.aws/deep-learning-containers/ray") == (
        f"{ECR}/mirror/public.ecr.aws/deep-learning-containers/ray")
    assert Destination("localhost:5000").name_for("docker.io/library/nginx") == "localhost:5000/docker.io/library/nginx"
    # A port after `_`, which no host name holds, and capitals lowered: a path is lower case.
    assert Destination(ECR).name_for("Registry.Example:5000/team/a") == f"{ECR}/registry.example_5000/team/a"
    with pytest.raises(PinguardError, match="cannot be copied under"):
        Destination("localhost:5000", "x" * 250).name_for("docker.io/library/nginx")
    with pytest.raises(PinguardError, match="IPv6 address is no path; pass --no-keep-registry"):
        MIRROR.name_for("[::1]:5000/team/a")


def test_without_the_registry_a_copy_keeps_the_path_alone() -> None:
    dropped = Destination(ECR, "mirror", keep_registry=False)
    assert dropped.name_for("public.ecr.aws/deep-learning-containers/ray") == (
        f"{ECR}/mirror/deep-learning-containers/ray")
    assert parse_destination(f"{ECR}/mirror", keep_registry=False) == dropped


def test_two_images_that_would_share_a_repository_are_refused_naming_both() -> None:
    lock = Lock().with_entries([locked("docker.io/acme/app", A), locked("ghcr.io/acme/app", B),
                                locked("ghcr.io/acme/other", B)])
    dropped = Destination(ECR, "mirror", keep_registry=False)
    assert collisions(lock, dropped) == [
        f"docker.io/acme/app and ghcr.io/acme/app would share the repository {ECR}/mirror/acme/app: two images, "
        "one name"]
    with pytest.raises(PinguardError, match="--keep-registry keeps each source registry in the path") as raised:
        refuse_collisions(lock, dropped)
    assert list(raised.value.details) == collisions(lock, dropped)
    assert collisions(lock, MIRROR) == []  # keeping the registry, no two names meet


def test_a_copy_that_would_land_on_another_images_own_name_is_refused() -> None:
    lock = Lock().with_entries([locked("public.ecr.aws/team/a", A), locked(f"{KEPT}/team/a", B)])
    assert collisions(lock, MIRROR) == [
        f"public.ecr.aws/team/a and {KEPT}/team/a would share the repository {KEPT}/team/a: two images, one name"]


def test_a_lock_recording_one_copy_for_two_images_is_refused() -> None:
    shared = f"{ECR}/mirror/acme/app"
    with pytest.raises(ValueError, match="two images cannot share one name"):
        Lock().with_entries([locked("docker.io/acme/app", A, shared), locked("ghcr.io/acme/app", B, shared)])
    # Two tags of one image copied to one repository are one image's copies: nothing to refuse.
    Lock().with_entries([locked("docker.io/acme/app", A, shared),
                         replace(locked("docker.io/acme/app", B, shared), tag="v2")])


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


FILES = {
    "Dockerfile": f"FROM public.ecr.aws/team/a:v1 AS build\nFROM public.ecr.aws/team/b:v1@{B}\n",
    "job.yaml": ("containers:\n  - name: a\n    image: \"public.ecr.aws/team/a:v1\"  # the trainer\n"
                 "  - name: c\n    image: public.ecr.aws/team/c:v1\n"),
    "chart/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
    "chart/values.yaml": "image:\n  repository: public.ecr.aws/team/a\n  tag: v1\n",
}


def test_references_are_renamed_to_their_copy_byte_for_byte(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    changes, refused = retarget(scan_paths([str(tmp_path)]), LOCK, MIRROR)
    assert {scanned.file.path.name: text for scanned, text in changes} == {
        "Dockerfile": f"FROM {KEPT}/team/a:v1@{A} AS build\nFROM {KEPT}/team/b:v1@{B}\n",
        "job.yaml": (f"containers:\n  - name: a\n    image: \"{KEPT}/team/a:v1@{A}\"  # the trainer\n"
                     "  - name: c\n    image: public.ecr.aws/team/c:v1\n"),
    }
    reasons = {(Path(found.path).name, str(found.reference)): reason for found, reason in refused}
    assert reasons == {
        ("job.yaml", "public.ecr.aws/team/c:v1"): "the lock records no copy of public.ecr.aws/team/c:v1 under "
                                                  f"{ECR}/mirror; run `pinguard copy` first",
        ("values.yaml", "public.ecr.aws/team/a:v1"): "its repository is written apart from its tag or digest; "
                                                     "rename it where it is set",
    }


def test_renamed_references_are_left_alone_the_second_time(tmp_path: Path) -> None:
    write(tmp_path, {"Dockerfile": FILES["Dockerfile"]})
    (scanned, text), = retarget(scan_paths([str(tmp_path)]), LOCK, MIRROR).changes
    scanned.file.path.write_text(text)
    assert retarget(scan_paths([str(tmp_path)]), LOCK, MIRROR) == ([], [])


def test_a_reference_pinned_elsewhere_than_the_lock_is_not_renamed(tmp_path: Path) -> None:
    write(tmp_path, {"Dockerfile": f"FROM public.ecr.aws/team/a:v1@{B}\n"})
    changes, [(_, reason)] = retarget(scan_paths([str(tmp_path)]), LOCK, MIRROR)
    assert changes == []
    assert reason == f"pinned to {B}, not the locked {A}; run `pinguard pin` first"


def test_only_the_copy_under_the_destination_is_used(tmp_path: Path) -> None:
    write(tmp_path, {"Dockerfile": FILES["Dockerfile"]})
    changes, refused = retarget(scan_paths([str(tmp_path)]), LOCK, Destination("localhost:5000"))
    assert [text for _, text in changes] == [
        f"FROM public.ecr.aws/team/a:v1 AS build\nFROM localhost:5000/public.ecr.aws/team/b:v1@{B}\n"]
    assert [reason for _, reason in refused] == [
        "the lock records no copy of public.ecr.aws/team/a:v1 under localhost:5000; run `pinguard copy` first"]


def test_a_copy_named_the_other_way_is_pointed_at_with_its_flag(tmp_path: Path) -> None:
    lock = Lock().with_entries([locked("public.ecr.aws/team/a", A, f"{ECR}/mirror/team/a")])
    write(tmp_path, {"Dockerfile": "FROM public.ecr.aws/team/a:v1\n"})
    changes, [(_, reason)] = retarget(scan_paths([str(tmp_path)]), lock, MIRROR)
    assert changes == []
    assert reason == (f"the lock records no copy of public.ecr.aws/team/a:v1 under {ECR}/mirror; it records one at "
                      f"{ECR}/mirror/team/a: pass --no-keep-registry")
    [(_, text)] = retarget(scan_paths([str(tmp_path)]), lock, replace(MIRROR, keep_registry=False)).changes
    assert text == f"FROM {ECR}/mirror/team/a:v1@{A}\n"


def test_images_that_would_share_a_copy_are_never_renamed(tmp_path: Path) -> None:
    shared = f"{ECR}/mirror/acme/app"
    lock = Lock().with_entries([locked("docker.io/acme/app", A, shared),
                                replace(locked("ghcr.io/acme/app", B, shared), tag="v2")])
    write(tmp_path, {"Dockerfile": "FROM docker.io/acme/app:v1\nFROM ghcr.io/acme/app:v2\n"})
    changes, refused = retarget(scan_paths([str(tmp_path)]), lock, replace(MIRROR, keep_registry=False))
    assert changes == []
    assert [reason for _, reason in refused] == [
        f"{name} would share its copy's repository under {ECR}/mirror with another image"
        for name in ("docker.io/acme/app", "ghcr.io/acme/app")]
