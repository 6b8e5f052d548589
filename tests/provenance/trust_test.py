"""What signatures are verified against: files the policy names, nothing trusted unless named."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from pinguard.provenance.trust import Trust


def test_nothing_is_trusted_unless_named() -> None:
    trust = Trust()
    assert (trust.keys, trust.trusted_root, trust.notation_certs, trust.notation_authorities) == ((), None, (), ())


def test_it_cannot_be_changed_once_made(tmp_path: Path) -> None:
    trust = Trust(keys=(tmp_path / "cosign.pub",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        trust.keys = ()  # type: ignore[misc]
    assert trust == Trust(keys=(tmp_path / "cosign.pub",))  # compared by what it names


def test_carrying_it_loads_no_other_provenance_module() -> None:
    code = ("import sys, pinguard.provenance.trust; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('pinguard.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == ["pinguard.provenance", "pinguard.provenance.trust"]
