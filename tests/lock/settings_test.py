"""What `lock` does with a digest written beside a tag that points elsewhere, as the policy's words name it."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.lock.settings import WrittenDigest
from pinguard.policy.load import load


def test_the_policy_words_name_each_choice() -> None:
    assert [WrittenDigest(word) for word in ("refuse", "tag", "digest")] == [
        WrittenDigest.REFUSE, WrittenDigest.LOCK_TAG, WrittenDigest.KEEP_DIGEST]
    with pytest.raises(ValueError):
        WrittenDigest("keep")


def test_by_default_lock_refuses(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules: {}\n")
    assert load([policy]).written_digest is WrittenDigest.REFUSE


@pytest.mark.parametrize("choice", list(WrittenDigest))
def test_the_policy_chooses_through_tag_digest_mismatch(tmp_path: Path, choice: WrittenDigest) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"rules:\n  tag-digest-mismatch: {{lock: {choice.value}}}\n")
    assert load([policy]).written_digest is choice
