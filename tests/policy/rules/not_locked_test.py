"""not-locked: a reference, or the digest it names, the lock does not hold, as a truth table."""
# ruff: noqa: E501 - the truth table reads best one case a line
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.policy.helpers import DIGEST, OTHER, assert_reference_rule

RULE = "not-locked"


@pytest.mark.parametrize(
    ("image", "conf", "lock_images", "expected"),
    [
        # image written                 conf                              locked            message part
        ("nginx:1.25",                 {},                               [],               "is not in pinguard.lock"),
        ("nginx:1.25",                 {},                               ["nginx:1.25"],   None),
        ("nginx",                      {},                               ["nginx:latest"], None),
        (f"nginx@{OTHER}",             {},                               [],               f"{OTHER} is not a digest pinguard.lock holds for docker.io/library/nginx: write the tag"),
        (f"nginx@{OTHER}",             {},                               ["nginx:1.25"],   "is not a digest pinguard.lock holds"),
        (f"nginx@{DIGEST}",            {},                               ["nginx:1.25"],   None),
        (f"redis@{DIGEST}",            {},                               ["nginx:1.25"],   "is not a digest pinguard.lock holds for docker.io/library/redis"),
        (f"nginx:1.25@{OTHER}",        {},                               ["nginx:1.25"],   None),  # digest-mismatch says so
    ],
)
def test_rule(folder: Path, image: str, conf: dict[str, Any], lock_images: list[str], expected: str | None) -> None:
    assert_reference_rule(folder, RULE, image, conf, lock_images, expected)
