"""Which binary builds kustomizations, as the policy names it, and the files kustomize reads in a folder."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.kustomize.settings import NAMES, KustomizeSettings
from pinguard.policy.load import load


def test_kustomize_reads_the_three_names_it_looks_for_in_a_folder() -> None:
    assert NAMES == ("kustomization.yaml", "kustomization.yml", "Kustomization")


def test_by_default_no_binary_is_named_and_no_build_is_kept() -> None:
    assert KustomizeSettings() == KustomizeSettings(binary=None, cache_dir=None)


@pytest.mark.parametrize(("written", "meant"), [("kubectl", "kubectl"), ("bin/kustomize", "{folder}/bin/kustomize")])
def test_the_policy_names_a_binary_on_the_path_or_beside_itself(tmp_path: Path, written: str, meant: str) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"kustomize:\n  binary: {written}\n")
    assert load([policy]).kustomize == KustomizeSettings(meant.format(folder=tmp_path))
