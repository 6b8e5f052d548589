"""tag-digest-mismatch: a reference to a locked digest its tag did not point to when it was locked is reported."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pinguard.lock.lockfile import Lock
from tests.policy.helpers import DIGEST, check_rule, locked, places, pod

RULE = "tag-digest-mismatch"


def _locked(folder: Path, tag_served: bool) -> Lock:
    """nginx:1.25 locked to DIGEST, recorded as served by its tag or not."""
    lock = locked(folder, "nginx:1.25")
    return Lock().with_entries(dataclasses.replace(entry, tag_served=tag_served) for entry in lock.entries.values())


@pytest.mark.parametrize("image", ["nginx:1.25", f"nginx:1.25@{DIGEST}"])
def test_a_digest_its_tag_did_not_serve_is_reported_however_it_is_written(folder: Path, image: str) -> None:
    found = check_rule(folder, RULE, {"pod.yaml": pod(image)}, lock=_locked(folder, tag_served=False))
    assert places(found) == [("pod.yaml", 5, 12)]
    assert f"pinguard.lock holds {DIGEST} for docker.io/library/nginx:1.25" in found[0].message
    assert "which that tag did not point to when it was locked" in found[0].message


@pytest.mark.parametrize("image", ["nginx:1.25", f"nginx:1.25@{DIGEST}", "redis:7"])
def test_a_digest_its_tag_served_or_an_image_not_locked_passes(folder: Path, image: str) -> None:
    assert check_rule(folder, RULE, {"pod.yaml": pod(image)}, lock=_locked(folder, tag_served=True)) == []


def test_a_digest_alone_names_no_tag_to_check_against(folder: Path) -> None:
    found = check_rule(folder, RULE, {"pod.yaml": pod(f"nginx@{DIGEST}")}, lock=_locked(folder, tag_served=False))
    assert found == []
