"""A policy's `ecr:` read as `copy` reads it: only what it sets, each key checked, errors naming the key."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.copy.ecr import RepositorySettings, repository_options
from pinguard.policy.load import PolicyError, load


def test_only_what_the_section_sets_is_read() -> None:
    assert repository_options({}) == {}
    assert repository_options({"tag-mutability": "IMMUTABLE"}) == {"tag_mutability": "IMMUTABLE"}
    assert RepositorySettings(**repository_options({"scan-on-push": True})) == RepositorySettings("MUTABLE", True)


def test_a_policy_that_extends_another_overrides_key_by_key(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("ecr: {tag-mutability: IMMUTABLE, scan-on-push: true}\n")
    (tmp_path / "child.yaml").write_text("extends: base.yaml\necr: {scan-on-push: false}\n")
    assert load([tmp_path / "child.yaml"]).ecr == RepositorySettings("IMMUTABLE", False)


@pytest.mark.parametrize(("text", "said"), [
    ("ecr: {tag-mutability: mutable}\n", "ecr.tag-mutability: expected one of MUTABLE, IMMUTABLE"),
    ("ecr: {scan-on-push: 'yes'}\n", "ecr.scan-on-push: expected true or false"),
    ("ecr: {scan: true}\n", "ecr: unknown key 'scan' (known: tag-mutability, scan-on-push)"),
])
def test_a_wrong_section_is_refused_naming_the_key(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / "policy.yaml").write_text(text)
    with pytest.raises(PolicyError) as raised:
        load([tmp_path / "policy.yaml"])
    assert str(raised.value) == f"invalid policy {tmp_path / 'policy.yaml'}: {said}"
