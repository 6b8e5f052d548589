"""Copy names that cannot collide, as a user meets them on the command line: two images are never given one name
by `copy` or `pin --to`, and a lock that records one copy for two images is refused by every command reading it."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Copy, Lock, LockEntry

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER, GHCR = "sha256:" + "d" * 64, "sha256:" + "e" * 64
MIRROR = "localhost:5000/m"


def locked(name: str, digest: str, *copies: str) -> LockEntry:
    return LockEntry(name=name, tag="1.0", digest=digest, media_type=MANIFEST, size=1, tag_kind="other",
                     frozen_tag=None, resolved_at="2026-12-01T00:00:00Z", platforms={"linux/amd64": digest},
                     copies=tuple(Copy(to, "2026-12-02T00:00:00Z") for to in copies))


def pinguard(tmp_path: Path, *arguments: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([*arguments, "--lockfile", str(tmp_path / "pinguard.lock")],
                  env={"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


# Two images on loopback registries where nothing listens: a copy that reached one fails on the connection.
HERE, THERE = "localhost:9/acme/app", "127.0.0.1:9/acme/app"


def test_copy_refuses_two_images_one_name_before_anything_is_sent(tmp_path: Path) -> None:
    lockfile.write(tmp_path / "pinguard.lock", Lock().with_entries([locked(HERE, DOCKER), locked(THERE, GHCR)]))
    before = (tmp_path / "pinguard.lock").read_bytes()
    status, out, err = pinguard(tmp_path, "copy", "--to", MIRROR, "--no-keep-registry", "--timeout", "5")
    assert status == 2
    assert out == ""
    assert "--keep-registry keeps each source registry in the path" in err
    assert f"{THERE} and {HERE} would share the repository {MIRROR}/acme/app: two images, one name" in err
    assert "connect" not in err.lower()
    assert (tmp_path / "pinguard.lock").read_bytes() == before


def test_copy_keeps_the_registry_by_default_so_the_names_differ(tmp_path: Path) -> None:
    lockfile.write(tmp_path / "pinguard.lock", Lock().with_entries([locked(HERE, DOCKER), locked(THERE, GHCR)]))
    status, _, err = pinguard(tmp_path, "copy", "--to", MIRROR, "--dry-run", "--timeout", "5", "--insecure-registry",
                              "localhost:9", "--insecure-registry", "127.0.0.1:9")
    assert "would share" not in err
    assert status == 2  # nothing listens at the sources: the refusal above was never the reason
    assert f"{HERE}:1.0" in err and f"{THERE}:1.0" in err


def test_a_lock_recording_one_copy_for_two_images_is_refused_by_its_readers(tmp_path: Path) -> None:
    text = lockfile.dumps(Lock().with_entries([locked("docker.io/acme/app", DOCKER, f"{MIRROR}/acme/app")]))
    other = lockfile.dumps(Lock().with_entries([locked("ghcr.io/acme/app", GHCR, f"{MIRROR}/acme/app")]))
    (tmp_path / "pinguard.lock").write_text(text + "\n" + other.partition("version = 1\n")[2])
    (tmp_path / "pod.yaml").write_text(f"image: {MIRROR}/acme/app:1.0@{DOCKER}\n")
    before = (tmp_path / "pinguard.lock").read_bytes()
    for command in (["check", str(tmp_path / "pod.yaml")], ["pin", str(tmp_path / "pod.yaml")],
                    ["export", "admission"], ["pin", "--to", MIRROR, "--no-keep-registry", str(tmp_path)]):
        status, _, err = pinguard(tmp_path, *command)
        assert status == 2, command
        assert "ghcr.io/acme/app:1.0 records a copy at localhost:5000/m/acme/app:1.0, which is " \
               "docker.io/acme/app:1.0's copy: two images cannot share one name" in err, command
    assert (tmp_path / "pinguard.lock").read_bytes() == before
    assert (tmp_path / "pod.yaml").read_text() == f"image: {MIRROR}/acme/app:1.0@{DOCKER}\n"


@pytest.mark.parametrize("keep", [True, False])
def test_pin_to_renames_each_image_to_its_own_copy(tmp_path: Path, keep: bool) -> None:
    named = {"docker.io/acme/app": f"{MIRROR}/docker.io/acme/app" if keep else f"{MIRROR}/acme/app",
             "ghcr.io/acme/other": f"{MIRROR}/ghcr.io/acme/other" if keep else f"{MIRROR}/acme/other"}
    lockfile.write(tmp_path / "pinguard.lock", Lock().with_entries([
        locked("docker.io/acme/app", DOCKER, named["docker.io/acme/app"]),
        locked("ghcr.io/acme/other", GHCR, named["ghcr.io/acme/other"])]))
    (tmp_path / "pod.yaml").write_text("a: {image: docker.io/acme/app:1.0}\nb: {image: ghcr.io/acme/other:1.0}\n")
    flag = "--keep-registry" if keep else "--no-keep-registry"
    status, _, err = pinguard(tmp_path, "pin", "--to", MIRROR, flag, str(tmp_path / "pod.yaml"))
    assert (status, err) == (0, "")
    assert (tmp_path / "pod.yaml").read_text() == (
        f"a: {{image: {named['docker.io/acme/app']}:1.0@{DOCKER}}}\n"
        f"b: {{image: {named['ghcr.io/acme/other']}:1.0@{GHCR}}}\n")
    assert pinguard(tmp_path, "check", str(tmp_path / "pod.yaml"))[0] == 0
