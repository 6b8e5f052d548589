"""The copy as a user drives it: `pinguard copy`, then `pin --to` renames the manifests byte for byte, `check`
takes the renamed references as locked, and `verify --copies` vouches for the copy until a part of it goes."""
from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock
from testing.copying import PACED_AT, SOURCE, World, entry, image_of, layer, two_registries
from tests.conftest import require_registry_tools

pytestmark = pytest.mark.registry

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train  # the trainer
spec:
  containers:
    - name: a
      image: {a}
    - name: b
      image: "{b}"
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, Lock]]:
    require_registry_tools()
    with two_registries(tmp_path_factory.mktemp("copy-cli")) as world:
        base = [layer("cli-base", 50_000)]
        images = {"team/a": image_of([*base, layer("cli-a")], seed="cli-a"),
                  "team/b": image_of([*base, layer("cli-b")], seed="cli-b")}
        for repository, image in images.items():
            world.push(repository, image, "v1")
        yield world, Lock().with_entries(entry(repository, "v1", image) for repository, image in images.items())


def pinguard(world: World, tmp_path: Path, *arguments: str) -> tuple[int, str, str]:
    registry = ("--mirror", f"{SOURCE}={world.source_proxy.url}", "--ca-file", str(world.source.ca_file),
                "--rate", f"{SOURCE}={PACED_AT}", "--insecure-registry", world.target_host)
    online = arguments[0] in ("copy", "verify", "lock")
    out, err = io.StringIO(), io.StringIO()
    status = main([*arguments, "--lockfile", str(tmp_path / "pinguard.lock"), *(registry if online else ())],
                  env={"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_copy_then_pin_to_the_copy_then_check_and_verify(world: tuple[World, Lock], tmp_path: Path) -> None:
    registries, lock = world
    lockfile.write(tmp_path / "pinguard.lock", lock)
    manifest = tmp_path / "k8s" / "pod.yaml"
    manifest.parent.mkdir()
    manifest.write_text(POD.format(a=f"{SOURCE}/team/a:v1", b=f"{SOURCE}/team/b:v1"))
    mirror = f"{registries.target_host}/mirror"

    status, out, err = pinguard(registries, tmp_path, "copy", "--to", mirror)
    assert status == 0, err
    assert out.splitlines()[-1].startswith(f"copied 2 of 2 images to {mirror}: ")

    status, _, err = pinguard(registries, tmp_path, "pin", "--to", mirror, str(manifest.parent))
    assert status == 0, err
    a, b = (lock.get(f"{SOURCE}/team/{name}", "v1") for name in "ab")
    assert a is not None and b is not None
    kept = f"{mirror}/{SOURCE}"  # each copy keeps its source registry in its name
    assert manifest.read_text() == POD.format(a=f"{kept}/team/a:v1@{a.digest}", b=f"{kept}/team/b:v1@{b.digest}")

    status, out, err = pinguard(registries, tmp_path, "check", str(manifest.parent))
    assert (status, out) == (0, ""), out + err  # the copy's names stand for their entries: locked, and used
    locked = (tmp_path / "pinguard.lock").read_text()
    status, _, err = pinguard(registries, tmp_path, "lock", str(manifest.parent))
    assert status == 0, err
    assert (tmp_path / "pinguard.lock").read_text() == locked  # entries referenced by their copies' names are kept

    status, out, err = pinguard(registries, tmp_path, "verify", "--copies")
    assert status == 0, out + err
    assert "2 copies checked: each serves every digest" in out

    requests.delete(f"{registries.target.url}/v2/mirror/{SOURCE}/team/b/manifests/{b.digest}",
                    timeout=30).raise_for_status()
    status, out, err = pinguard(registries, tmp_path, "verify", "--copies")
    assert status == 1, out + err
    assert f"copy     {SOURCE}/team/b:v1 copied to {kept}/team/b: " in out


def test_pin_to_a_registry_the_lock_records_no_copy_in_renames_nothing(world: tuple[World, Lock],
                                                                       tmp_path: Path) -> None:
    registries, lock = world
    lockfile.write(tmp_path / "pinguard.lock", lock)
    manifest = tmp_path / "pod.yaml"
    text = POD.format(a=f"{SOURCE}/team/a:v1", b=f"{SOURCE}/team/b:v1")
    manifest.write_text(text)
    status, _, err = pinguard(registries, tmp_path, "pin", "--to", "elsewhere.example.com/mirror", str(manifest))
    assert status == 1
    assert manifest.read_text() == text
    assert err.count("not renamed: the lock records no copy of") == 2
