"""allowed-registries: images only from the registries the policy allows, as a truth table."""
# ruff: noqa: E501 - the truth table reads best one case a line
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.policy.helpers import assert_reference_rule

RULE = "allowed-registries"


@pytest.mark.parametrize(
    ("image", "conf", "lock_images", "expected"),
    [
        # image written                 conf                              locked            message part
        ("nginx:1.25",               {"allow": ["public.ecr.aws/*"]},  [],               "is not from an allowed registry"),
        ("public.ecr.aws/x/ray:v1",  {"allow": ["public.ecr.aws/*"]},  [],               None),
        ("nginx:1.25",               {},                               [],               None),
    ],
)
def test_rule(folder: Path, image: str, conf: dict[str, Any], lock_images: list[str], expected: str | None) -> None:
    assert_reference_rule(folder, RULE, image, conf, lock_images, expected)
