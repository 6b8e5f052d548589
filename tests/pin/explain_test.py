"""What a rebuild changed, said for a terminal and for a pull request: digests, frozen tags, layers, labels."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pinguard.lock.lockfile import LockEntry
from pinguard.pin.explain import Image, LabelChange, Rebuild, markdown, text
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for

OLD, NEW = "sha256:" + "1" * 64, "sha256:" + "2" * 64
VERSION = "org.opencontainers.image.version"


def _rebuild(folder: Path) -> Rebuild:
    (folder / "pod.yaml").write_text("kind: Pod\nspec:\n  containers:\n    - name: web\n      image: nginx:1.25\n")
    (entry,) = lock_for(scan_paths([str(folder / "pod.yaml")]).found)
    old: LockEntry = replace(entry, digest=OLD, frozen_tag=None)
    new: LockEntry = replace(entry, digest=NEW, frozen_tag="1.25.3")
    before = Image(OLD, "2026-01-01T00:00:00Z", {VERSION: "1.25.2", "gone": "x", "same": "|"}, 3)
    after = Image(NEW, "2026-02-01T00:00:00Z", {VERSION: "1.25.3", "new": "`y`", "same": "|"}, 3)
    return Rebuild(old, new, None, before, after)


def test_only_the_labels_that_changed_are_listed_sorted(tmp_path: Path) -> None:
    assert _rebuild(tmp_path).label_changes == [LabelChange("gone", "x", None), LabelChange("new", None, "`y`"),
                                                LabelChange(VERSION, "1.25.2", "1.25.3")]


def test_the_terminal_says_each_change_and_what_stayed(tmp_path: Path) -> None:
    assert text([_rebuild(tmp_path)]) == (
        "docker.io/library/nginx:1.25 moved\n"
        f"  digest      {OLD} -> {NEW}\n"
        "  frozen tag  none -> 1.25.3\n"
        "  created     2026-01-01T00:00:00Z -> 2026-02-01T00:00:00Z\n"
        "  layers      3 (unchanged)\n"
        "  label       gone: removed (was x)\n"
        "  label       new: added `y`\n"
        f"  label       {VERSION}: 1.25.2 -> 1.25.3\n")


def test_the_pull_request_body_has_a_row_per_image_and_code_that_holds_backticks(tmp_path: Path) -> None:
    body = markdown([_rebuild(tmp_path)])
    assert body.startswith("## Rebuilt images\n")
    assert "| `docker.io/library/nginx:1.25` | `sha256:111111111111` | `sha256:222222222222` | `1.25.3` |" in body
    assert "- label `new`: added `` `y` ``\n" in body


def test_nothing_moved_says_nothing() -> None:
    assert text([]) == "" and markdown([]) == ""
