"""Texts kept between runs: read back only under their key and only whole; trees hashed within bounds."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.write import kept
from pinguard.write.kept import KeptTexts, tree_hash


def test_a_text_is_read_back_under_its_key_only(tmp_path: Path) -> None:
    texts = KeptTexts(tmp_path / "cache")
    texts.put("k1", "kind: Pod\n")
    assert texts.get("k1") == "kind: Pod\n"
    assert texts.get("k2") is None


def test_a_damaged_file_is_a_miss(tmp_path: Path) -> None:
    texts = KeptTexts(tmp_path)
    texts.put("k", "image: nginx:1.25\n")
    path = tmp_path / "k"
    path.write_bytes(path.read_bytes().replace(b"1.25", b"1.26"))
    assert texts.get("k") is None


def test_no_folder_keeps_nothing_and_an_unwritable_one_is_no_error(tmp_path: Path) -> None:
    KeptTexts(None).put("k", "x")
    assert KeptTexts(None).get("k") is None
    (tmp_path / "file").write_text("")
    blocked = KeptTexts(tmp_path / "file" / "cache")  # a folder below a file cannot be made
    blocked.put("k", "x")
    assert blocked.get("k") is None


def test_the_tree_hash_changes_with_any_name_or_byte(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.yaml").write_text("a")
    first = tree_hash(tmp_path)
    (tmp_path / "sub" / "a.yaml").write_text("b")
    second = tree_hash(tmp_path)
    (tmp_path / "sub" / "a.yaml").rename(tmp_path / "sub" / "c.yaml")
    assert len({first, second, tree_hash(tmp_path)}) == 3


def test_a_tree_past_the_bounds_has_no_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(3):
        (tmp_path / f"{n}.yaml").write_text("x")
    monkeypatch.setattr(kept, "_MAX_FILES", 2)
    assert tree_hash(tmp_path) is None


def test_made_once_a_run_kept_between_runs_and_a_failure_never_kept(tmp_path: Path) -> None:
    calls: list[str] = []

    def make(text: str) -> str:
        calls.append(text)
        if text == "bad":
            raise ValueError("the tool refused it")
        return text

    first = KeptTexts(tmp_path)
    assert first.made("k", lambda: make("render"), ValueError) == "render"
    assert first.made("k", lambda: make("again"), ValueError) == "render"  # this run's answer
    for _ in range(2):
        with pytest.raises(ValueError, match="refused"):
            first.made("f", lambda: make("bad"), ValueError)
    assert first.made("e", lambda: make("edited"), ValueError, keep=False) == "edited"
    assert calls == ["render", "bad", "edited"]
    later = KeptTexts(tmp_path)  # the next run
    assert later.made("k", lambda: make("not needed"), ValueError) == "render"
    assert later.made("f", lambda: make("fixed"), ValueError) == "fixed"
    assert later.made("e", lambda: make("edited again"), ValueError) == "edited again"
    assert later.made(None, lambda: make("no key"), ValueError) == "no key"
    assert calls[3:] == ["fixed", "edited again", "no key"]
