"""The quick start's main command: the bundled example end to end against a stand-in registry."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_registry_tools

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.registry
@pytest.mark.ray
@pytest.mark.slow
def test_demo_runs_the_whole_flow() -> None:
    require_registry_tools()
    before = {p: p.read_bytes() for p in (ROOT / "examples" / "dlc").iterdir()}
    # A bound against a hang, not a measure: the demo trains on Ray, which on two cores both kept busy by another
    # process (and the suite's other workers) takes several minutes.
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py")], capture_output=True, text=True,
                            timeout=1200, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "STAND-INS" in result.stdout
    assert "pinguard.lock: 3 new, 0 kept, 0 dropped" in result.stdout
    assert "pinned 5 files" in result.stdout
    assert "done: step 5" in result.stdout  # the tiny model trained to the end on local Ray
    assert "frozen tag  train-ml-cuda-v1.1.2 -> train-ml-cuda-v1.1.3" in result.stdout  # the rebuild explained
    assert "updated 1 tag in pinguard.lock, re-pinned 3 files" in result.stdout
    assert {p: p.read_bytes() for p in (ROOT / "examples" / "dlc").iterdir()} == before  # example untouched
