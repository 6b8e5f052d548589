"""A tree of three files to write, and journals written by hand as a run that died would have left them."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pinguard.write.atomic import temporary_path
from pinguard.write.journal import JOURNAL, recover

NAMES = ("a/one.yaml", "a/two.yaml", "b/three.yaml")
TOKEN = "0123abcd"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = (tmp_path / "tree").resolve()
    for name in NAMES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"old {name}\n")
        (root / name).chmod(0o640)
    return root


def contents(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text() for name in NAMES}


def leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob(".*") if p.is_file())


def recovered(*roots: Path) -> str:
    return "".join(f"pinguard: {line}\n" for line in recover(list(roots)))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def journal_record(target: str, token: str = TOKEN) -> dict[str, str]:
    return {"target": target, "temporary": temporary_path(Path(target), token).as_posix(),
            "old": _sha(f"old {target}\n"), "new": _sha(f"new {target}\n")}


def write_journal(root: Path, records: list[object], *, renaming: bool, tail: bytes = b"") -> None:
    lines = [{"journal": "pinguard", "version": 1, "token": TOKEN}, *records]
    if renaming:
        lines.append({"renaming": len(records)})
    (root / JOURNAL).write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines) + tail)


def stage_by_hand(root: Path, name: str, text: str | None = None) -> Path:
    temporary = temporary_path(root / name, TOKEN)
    temporary.write_text(f"new {name}\n" if text is None else text)
    return temporary
