"""digest-mismatch: a tag written with another digest than the lock holds for it, as a truth table."""
# ruff: noqa: E501 - the truth table reads best one case a line
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.policy.helpers import DIGEST, OTHER, assert_reference_rule

RULE = "digest-mismatch"


@pytest.mark.parametrize(
    ("image", "conf", "lock_images", "expected"),
    [
        # image written                 conf                              locked            message part
        (f"nginx:1.25@{OTHER}",        {},                               ["nginx:1.25"],   f"but pinguard.lock has {DIGEST}"),
        (f"nginx:1.25@{DIGEST}",       {},                               ["nginx:1.25"],   None),
        ("nginx:1.25",                 {},                               ["nginx:1.25"],   None),
    ],
)
def test_rule(folder: Path, image: str, conf: dict[str, Any], lock_images: list[str], expected: str | None) -> None:
    assert_reference_rule(folder, RULE, image, conf, lock_images, expected)
