"""Where policies are: the project's own file, found relative to where pinguard runs, and the shipped presets."""
from __future__ import annotations

from pinguard.policy.load import load
from pinguard.policy.locations import PRESETS, PROJECT_POLICY


def test_the_project_policy_is_relative_to_the_folder_pinguard_runs_in() -> None:
    assert not PROJECT_POLICY.is_absolute()
    assert PROJECT_POLICY.name == ".pinguard.yaml"


def test_the_presets_ship_inside_the_package_and_each_loads() -> None:
    presets = sorted(path.name for path in PRESETS.glob("*.yaml"))
    assert PRESETS.is_absolute() and PRESETS.parent.name == "pinguard"
    assert "default.yaml" in presets and "aws-dlc.yaml" in presets
    for name in presets:
        assert load([PRESETS / name]).rules  # every shipped preset is a valid policy
