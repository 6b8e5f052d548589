"""denied-tags: the tags the policy denies, `latest` unless told, as a truth table."""
# ruff: noqa: E501 - the truth table reads best one case a line
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.policy.helpers import OTHER, assert_reference_rule

RULE = "denied-tags"


@pytest.mark.parametrize(
    ("image", "conf", "lock_images", "expected"),
    [
        # image written                 conf                              locked            message part
        ("nginx:latest",               {},                               [],               "uses the tag `latest`"),
        ("nginx",                      {},                               [],               "has no tag, so it means `latest`"),
        ("nginx",                      {"untagged": False},              [],               None),
        ("nginx:edge",                 {"tags": ["edge"]},               [],               "uses the tag `edge`"),
        (f"nginx@{OTHER}",             {},                               [],               None),
    ],
)
def test_rule(folder: Path, image: str, conf: dict[str, Any], lock_images: list[str], expected: str | None) -> None:
    assert_reference_rule(folder, RULE, image, conf, lock_images, expected)
