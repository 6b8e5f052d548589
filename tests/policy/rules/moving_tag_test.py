"""moving-tag: a tag that moves, named with the frozen one the lock knows, and the policy's tag patterns."""
# ruff: noqa: E501 - the truth table reads best one case a line
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.policy.helpers import assert_reference_rule, check_rule, locked, pod

RULE = "moving-tag"


@pytest.mark.parametrize(
    ("image", "conf", "lock_images", "expected"),
    [
        # image written                 conf                              locked            message part
        ("ghcr.io/o/app:v1.2",         {},                               ["ghcr.io/o/app:v1.2"], "names the moving tag `v1.2`"),
        ("ghcr.io/o/app:v1.2.3",       {},                               [],               None),
    ],
)
def test_rule(folder: Path, image: str, conf: dict[str, Any], lock_images: list[str], expected: str | None) -> None:
    assert_reference_rule(folder, RULE, image, conf, lock_images, expected)


def test_moving_tag_names_the_frozen_tag_from_the_lock(folder: Path) -> None:
    lock = locked(folder, "ghcr.io/o/app:v1.2")
    entry = next(iter(lock))
    from pinguard.lock.lockfile import Lock, LockEntry

    lock = Lock().with_entries([LockEntry(**{**entry.__dict__, "frozen_tag": "v1.2.7"})])
    [finding] = check_rule(folder, "moving-tag", {"pod.yaml": pod("ghcr.io/o/app:v1.2")}, lock=lock)
    assert "the frozen tag `v1.2.7` serves the locked digest" in finding.message


def test_moving_tag_follows_the_policy_tag_patterns(folder: Path) -> None:
    extra = {"tags": [{"repository": "docker.io/library/*", "moving": r"^\d+\.\d+$", "frozen": r"^\d+\.\d+\.\d+$"}]}
    assert len(check_rule(folder, "moving-tag", {"pod.yaml": pod("nginx:1.25")}, extra=extra)) == 1
    assert check_rule(folder, "moving-tag", {"pod.yaml": pod("nginx:1.25.3")}, extra=extra) == []
