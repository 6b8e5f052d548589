"""Finding the binary that builds kustomizations, and building offline."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.kustomize.binary import BuildFailed, locate


def test_kubectl_is_found_by_name_on_path_and_reports_its_kustomize(kubectl: str) -> None:
    found = locate(None, {"PATH": str(Path(kubectl).parent)})
    assert found is not None and found.kubectl and found.version == "v5.7.1"


def test_none_at_hand_is_none_and_a_named_one_that_is_missing_is_an_error(tmp_path: Path) -> None:
    assert locate(None, {"PATH": str(tmp_path)}) is None
    with pytest.raises(PinguardError, match="'kubctl' is not an executable file"):
        locate("kubctl", {"PATH": str(tmp_path)})  # a typo must not read kustomizations another way


def test_a_remote_base_that_reaches_the_build_is_an_error_not_a_download(kubectl: str, tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(
        "resources:\n  - https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.0.0\n")
    found = locate(kubectl, {"PATH": os.defpath})
    assert found is not None
    with pytest.raises(BuildFailed):
        found.build(tmp_path, {"PATH": os.defpath, "HOME": str(tmp_path)})


def test_files_outside_the_kustomization_are_not_loaded(kubectl: str, tmp_path: Path) -> None:
    (tmp_path / "secret.yaml").write_text("kind: Pod\nmetadata: {name: a}\nspec: {containers: [{image: a:1}]}\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources:\n  - ../secret.yaml\n")
    found = locate(kubectl, {"PATH": os.defpath})
    assert found is not None
    with pytest.raises(BuildFailed, match=r"security|outside|not in or below"):
        found.build(tmp_path / "app", {"PATH": os.defpath, "HOME": str(tmp_path)})
