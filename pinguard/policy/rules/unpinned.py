"""unpinned: every image reference carries a digest.

A tag alone is a promise the registry may break at the next push; `name:tag@sha256:...`
is not. `pinguard pin` writes the locked digest next to the tag.

PASS: `image: nginx:1.25@sha256:4c0f...`
FAIL: `image: nginx:1.25`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at, spelled
from pinguard.sources.base import Found

ID = "unpinned"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    if found.reference is not None and found.reference.digest is None and found.fixed is not None:
        yield at(found, f"{spelled(found)} has no digest, and {found.fixed}: pin it at deploy time with "
                        "`pinguard post-render`, which pins every rendered image from the lock")
    elif found.reference is not None and found.reference.digest is None:
        how = "run `pinguard pin --helm PATH`" if found.pin_needs_helm else "run `pinguard pin`"
        yield at(found, f"{spelled(found)} has no digest: {how} to pin it to the locked digest")
