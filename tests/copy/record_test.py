"""The lock told where its images were copied: once each, and only for entries still locked at the digest copied."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pinguard.copy.plan import ImagePlan
from pinguard.copy.record import record_copies
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Copy, LockEntry
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for

TARGET = "registry.example.com/mirror/nginx"


def _locked(folder: Path) -> tuple[Path, LockEntry]:
    (folder / "pod.yaml").write_text("kind: Pod\nspec:\n  containers:\n    - name: web\n      image: nginx:1.25\n")
    path = folder / "pinguard.lock"
    lockfile.write(path, lock_for(scan_paths([str(folder / "pod.yaml")]).found))
    (entry,) = lockfile.read(path)
    return path, entry


def _plan(entry: LockEntry, target: str = TARGET) -> ImagePlan:
    return ImagePlan(entry, "docker.io", "library/nginx", target, ())


def test_a_copy_is_recorded_on_its_entry(tmp_path: Path) -> None:
    path, entry = _locked(tmp_path)
    assert record_copies(path, [_plan(entry)]) == []
    (copy,) = lockfile.read(path).get(entry.name, entry.tag).copies  # type: ignore[union-attr]
    assert copy.to == TARGET and copy.at.endswith("Z")


def test_a_copy_already_recorded_keeps_its_time_and_the_lock_its_bytes(tmp_path: Path) -> None:
    path, entry = _locked(tmp_path)
    recorded = replace(entry, copies=(Copy(TARGET, "2020-01-02T03:04:05Z"),))
    lockfile.write(path, lockfile.read(path).with_entries([recorded]))
    before = path.read_bytes()
    record_copies(path, [_plan(entry)])
    assert path.read_bytes() == before


def test_an_entry_relocked_at_another_digest_meanwhile_gets_no_copy(tmp_path: Path) -> None:
    path, entry = _locked(tmp_path)
    before = path.read_bytes()
    record_copies(path, [_plan(replace(entry, digest="sha256:" + "0" * 64))])
    assert path.read_bytes() == before
