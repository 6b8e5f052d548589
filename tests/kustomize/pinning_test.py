"""`pin` of kustomizations: kustomize's own forms, kept only where a second build confirms them."""
from __future__ import annotations

import io
import subprocess
from pathlib import Path

from pinguard.cli import main
from pinguard.kustomize.settings import KustomizeSettings
from pinguard.lock import lockfile
from pinguard.scan.paths import ScanSettings, scan_paths
from testing.lockdata import lock_for, locked_test_digest
from tests.kustomize.conftest import FIXTURES


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _locked(kubectl: str, *paths: str) -> None:
    found = scan_paths(list(paths), ScanSettings(kustomize=KustomizeSettings(binary=kubectl))).found
    Path("pinguard.lock").write_text(lockfile.dumps(lock_for(found)))


def _pinned(name: str, tag: str) -> str:
    return f"{name}:{tag}@{locked_test_digest(f'docker.io/library/{name}', tag)}"


def test_pin_writes_each_image_where_it_is_controlled_byte_for_byte_and_once(kubectl: str, tree: Path) -> None:
    _locked(kubectl, ".")
    code, _, err = _run("pin", "--kustomize", kubectl, ".")
    assert code == 0, err
    base = (FIXTURES / "base/deployment.yaml").read_text()
    for name, tag in (("alpine", "3.19"), ("nginx", "1.25"), ("busybox", "1.36")):
        base = base.replace(f"image: {name}:{tag}\n", f"image: {_pinned(name, tag)}\n")
    assert (tree / "base/deployment.yaml").read_text() == base
    assert (tree / "overlays/json6902/set-image.yaml").read_text() == \
        (FIXTURES / "overlays/json6902/set-image.yaml").read_text().replace("python:3.11", _pinned("python", "3.11"))
    assert (tree / "overlays/inline-patch/kustomization.yaml").read_text() == \
        (FIXTURES / "overlays/inline-patch/kustomization.yaml").read_text().replace(
            "python:3.12", _pinned("python", "3.12"))
    assert (tree / "overlays/replacements/images.yaml").read_text() == \
        (FIXTURES / "overlays/replacements/images.yaml").read_text().replace("redis:7.2", _pinned("redis", "7.2"))
    # `images:` entries: a `digest:` added after `newTag`, and a digest that is not the locked one replaced
    images = (FIXTURES / "overlays/images/kustomization.yaml").read_text()
    images = images.replace('newTag: "1.27"\n', 'newTag: "1.27"\n    digest: '
                            f'{locked_test_digest("ghcr.io/acme/nginx", "1.27")}\n')
    images = images.replace("sha256:" + "1" * 64, locked_test_digest("docker.io/library/busybox", "1.37"))
    assert (tree / "overlays/images/kustomization.yaml").read_text() == images
    before = {path: path.read_bytes() for path in tree.rglob("*.yaml")}
    assert _run("pin", "--kustomize", kubectl, ".")[0] == 0
    assert {path: path.read_bytes() for path in tree.rglob("*.yaml")} == before  # a second pin changes nothing
    code, out, _ = _run("check", "--kustomize", kubectl, ".")
    assert code == 0, out


def test_an_overlay_whose_base_is_not_scanned_gets_images_entries_with_digests(kubectl: str, tree: Path) -> None:
    _locked(kubectl, "overlays/json6902")
    code, _, err = _run("pin", "--kustomize", kubectl, "overlays/json6902")
    assert code == 0, err
    assert (tree / "base/deployment.yaml").read_text() == (FIXTURES / "base/deployment.yaml").read_text()
    assert (tree / "overlays/json6902/kustomization.yaml").read_text() == \
        (FIXTURES / "overlays/json6902/kustomization.yaml").read_text() + (
            f"images:\n- name: alpine\n  digest: {locked_test_digest('docker.io/library/alpine', '3.19')}\n"
            f"- name: nginx\n  digest: {locked_test_digest('docker.io/library/nginx', '1.25')}\n")
    built = subprocess.run([kubectl, "kustomize", "overlays/json6902"], capture_output=True, text=True, check=True)
    assert f"image: nginx@{locked_test_digest('docker.io/library/nginx', '1.25')}" in built.stdout
    # kustomize drops the tag for the digest: the lock entry is still the tag's the base writes
    code, out, _ = _run("check", "--kustomize", kubectl, "overlays/json6902")
    assert code == 0, out


def test_an_image_no_place_pins_is_reported_and_left_unpinned(kubectl: str, tree: Path) -> None:
    # The base is not scanned, and the overlay's `images: []` is a flow list pinguard adds no entry to.
    kustomization = tree / "overlays/json6902/kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "images: []\n")
    before = kustomization.read_text()
    _locked(kubectl, "overlays/json6902")
    code, _, err = _run("pin", "--kustomize", kubectl, "overlays/json6902")
    assert code == 1
    assert "overlays/json6902/kustomization.yaml:1:1: nginx:1.25 not pinned: kustomize does not carry a digest" in err
    assert "its `images:` is not a block list pinguard can add an entry to" in err
    assert kustomization.read_text() == before
    assert (tree / "overlays/json6902/set-image.yaml").read_text().endswith(f"value: {_pinned('python', '3.11')}\n")
