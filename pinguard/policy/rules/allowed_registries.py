"""allowed-registries: images come only from registries and repositories you trust.

Option `allow`: glob patterns matched against the normalised name (registry and
repository, `docker.io/library/nginx` for `nginx`). An empty list allows all.

    allowed-registries:
      allow: ["public.ecr.aws/deep-learning-containers/*", "*.dkr.ecr.*.amazonaws.com/*"]

PASS: `public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1.0@sha256:...`
FAIL: `docker.io/someone/ray:latest`
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at, spelled
from pinguard.sources.base import Found

ID = "allowed-registries"
TYPE: Final = "reference"
CONF: dict[str, object] = {"allow": [str]}
DEFAULT: dict[str, object] = {"level": "off", "allow": []}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    allowed: list[str] = conf["allow"]
    reference = found.reference
    if reference is None or not allowed:
        return
    if not any(fnmatch.fnmatchcase(reference.name, pattern) for pattern in allowed):
        yield at(found, f"{spelled(found)} ({reference.name}) is not from an allowed registry; "
                        f"allowed: {', '.join(allowed)}")
