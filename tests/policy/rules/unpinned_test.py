"""unpinned: a reference without a digest, as a truth table: manifest in, findings out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.policy.helpers import DIGEST, assert_reference_rule

RULE = "unpinned"


@pytest.mark.parametrize(
    ("image", "conf", "lock_images", "expected"),
    [
        # image written                 conf                              locked            message part
        ("nginx:1.25",                 {},                               [],               "has no digest"),
        (f"nginx:1.25@{DIGEST}",       {},                               [],               None),
        ("${IMAGE}",                   {},                               [],               None),
    ],
)
def test_rule(folder: Path, image: str, conf: dict[str, Any], lock_images: list[str], expected: str | None) -> None:
    assert_reference_rule(folder, RULE, image, conf, lock_images, expected)
