"""Where policies are: the project's own file and the shipped presets.

Paths only, so that the command line can ask whether a project policy is there
without loading YAML or the rules (`load.py` reads them).
"""
from __future__ import annotations

from pathlib import Path

PROJECT_POLICY = Path(".pinguard.yaml")  # the project's own policy, in the folder pinguard runs in
PRESETS = Path(__file__).resolve().parent.parent / "policies"
