"""escaped-reference: a reference pinguard cannot pin as written passes only pinned to the locked digest."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.helpers import DIGEST, OTHER, check_rule, locked, places, pod

RULE = "escaped-reference"


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        (r'"\x65vil.example/tools:latest"', "reads as evil.example/tools:latest,"),
        (r'"\x6Eginx:1.25"', "reads as docker.io/library/nginx:1.25,"),  # the locked tag, but not pinned to its digest
        (f'"\\x6Eginx:1.25@{OTHER}"', "which pinguard cannot pin as written"),  # a digest the lock does not hold
        (f'"\\x6Eginx:1.25@{DIGEST}"', None),  # runs what the lock holds
        ('"nginx:latest"', None),  # plain quoted: pinned in place by the other rules
    ],
)
def test_rule(folder: Path, image: str, expected: str | None) -> None:
    found = check_rule(folder, RULE, {"pod.yaml": pod(image)}, lock=locked(folder, "nginx:1.25"))
    if expected is None:
        assert found == []
    else:
        assert places(found) == [("pod.yaml", 5, 12)]
        assert expected in found[0].message and found[0].rule == RULE
