"""templated: a reference no check can read, a template's value, as a truth table."""
# ruff: noqa: E501 - the truth table reads best one case a line
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.policy.helpers import assert_reference_rule

RULE = "templated"


@pytest.mark.parametrize(
    ("image", "conf", "lock_images", "expected"),
    [
        # image written                 conf                              locked            message part
        ("${IMAGE}",                   {},                               [],               "cannot be checked: templated value"),
        ("nginx:1.25",                 {},                               [],               None),
    ],
)
def test_rule(folder: Path, image: str, conf: dict[str, Any], lock_images: list[str], expected: str | None) -> None:
    assert_reference_rule(folder, RULE, image, conf, lock_images, expected)
