"""`pinguard pin` on golden files: `x.ext` pins to `x.golden.ext`; a file without a golden stays byte-identical."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from pinguard import lockfile
from pinguard.cli import main
from pinguard.scanning import scan
from testing.lockdata import lock_for

TESTDATA = Path(__file__).parent.parent / "testdata" / "pin"
INPUTS = sorted(p for p in TESTDATA.rglob("*") if p.is_file() and ".golden" not in p.name)


def _golden(path: Path) -> Path:
    stem, dot, ext = path.name.partition(".")
    golden = path.with_name(f"{stem}.golden.{ext}" if dot else f"{stem}.golden")
    return golden if golden.exists() else path


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(args, env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("source", INPUTS, ids=lambda p: str(p.relative_to(TESTDATA)))
def test_pin_matches_golden(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "tree"
    work.mkdir()
    target = work / source.name
    shutil.copyfile(source, target)
    target.chmod(0o640)
    monkeypatch.chdir(work)
    lockfile.write(work / "pinguard.lock", lock_for(scan([source.name]).found))

    status, _, err = _run(["pin", source.name])
    assert (status, err) == (0, "")
    assert target.read_bytes() == _golden(source).read_bytes()
    assert target.stat().st_mode & 0o777 == 0o640

    status, out, _ = _run(["pin", "--dry-run", source.name])  # a second pin has nothing left to do
    assert (status, out) == (0, "")
    assert target.read_bytes() == _golden(source).read_bytes()
