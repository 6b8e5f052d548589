"""pinguard measured as an install leaves it: its modules byte-compiled, started by its entry point.

pip compiles a wheel's modules as it installs them; an editable install leaves the
sources, and where PYTHONDONTWRITEBYTECODE is set every process would compile them
again (some 150 ms a start on the 2-core machine). Each benchmark that starts
pinguard calls `compile_pinguard` before it measures.
"""
from __future__ import annotations

import compileall
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pinguard"
# The command users run: the installed entry point, else the module.
_SCRIPT = Path(sys.executable).with_name("pinguard")
PINGUARD = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "pinguard"]


def compile_pinguard() -> None:
    if not compileall.compile_dir(PACKAGE, quiet=1):
        raise SystemExit(f"could not byte-compile {PACKAGE}")
