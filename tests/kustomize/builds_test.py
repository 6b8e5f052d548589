"""Builds kept between runs, under the hash of everything they read."""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from pinguard.kustomize.binary import locate
from pinguard.kustomize.builds import Builder


def test_a_kept_build_is_read_back_and_an_edited_file_is_a_miss(kubectl: str, tree: Path, tmp_path: Path) -> None:
    env = {"PATH": os.defpath, "HOME": str(tmp_path)}
    found = locate(kubectl, env)
    assert found is not None
    top = (tree / "overlays/json6902/kustomization.yaml").resolve()
    folders = [top.parent, (tree / "base").resolve()]
    first = Builder(found, tmp_path / "cache", env).build(top, folders)
    assert "python:3.11" in first
    broken = replace(found, path=str(tmp_path / "no-such-kubectl"))  # a build now would fail
    assert Builder(broken, tmp_path / "cache", env).build(top, folders) == first
    (tree / "overlays/json6902/set-image.yaml").write_text(
        (tree / "overlays/json6902/set-image.yaml").read_text().replace("3.11", "3.13"))
    assert "python:3.13" in Builder(found, tmp_path / "cache", env).build(top, folders)


def test_a_build_with_edits_is_made_from_a_copy(kubectl: str, tree: Path, tmp_path: Path) -> None:
    env = {"PATH": os.defpath, "HOME": str(tmp_path)}
    found = locate(kubectl, env)
    assert found is not None
    top = (tree / "overlays/json6902/kustomization.yaml").resolve()
    patch = (tree / "overlays/json6902/set-image.yaml").resolve()
    edited = {patch: patch.read_text().replace("python:3.11", "python:3.11@sha256:" + "a" * 64)}
    built = Builder(found, None, env).build(top, [top.parent, (tree / "base").resolve()], edited)
    assert f"python:3.11@sha256:{'a' * 64}" in built
    assert "@sha256" not in patch.read_text()  # the file itself is untouched
