from __future__ import annotations

import pytest

from pinguard.registry.challenge import Challenge, parse_challenges


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            'Bearer realm="https://public.ecr.aws/token/",service="public.ecr.aws",scope="aws"',
            [Challenge("bearer", {"realm": "https://public.ecr.aws/token/", "service": "public.ecr.aws",
                                  "scope": "aws"})],
        ),
        ('Basic realm="Registry Realm"', [Challenge("basic", {"realm": "Registry Realm"})]),
        (
            'Bearer realm="https://auth.docker.io/token", service="registry.docker.io", '
            'scope="repository:library/nginx:pull", error="insufficient_scope"',
            [Challenge("bearer", {"realm": "https://auth.docker.io/token", "service": "registry.docker.io",
                                  "scope": "repository:library/nginx:pull", "error": "insufficient_scope"})],
        ),
        ('Bearer realm="a\\"b"', [Challenge("bearer", {"realm": 'a"b'})]),
        ('Bearer realm="x", Basic realm="y"',
         [Challenge("bearer", {"realm": "x"}), Challenge("basic", {"realm": "y"})]),
        ("", []),
    ],
)
def test_parse_challenges(header: str, expected: list[Challenge]) -> None:
    assert parse_challenges(header) == expected
