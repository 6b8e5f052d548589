"""not-locked: every tagged reference has an entry in the lockfile.

Without an entry there is no verified digest to pin to or to compare with.
`pinguard lock` (or `pinguard pin --resolve`) resolves and records it.

PASS: `image: nginx:1.25` with `nginx:1.25` in pinguard.lock
FAIL: `image: nginx:1.25` and no such entry
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at, spelled
from pinguard.sources.base import Found

ID = "not-locked"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    key, entry = context.locked(found)
    if key is not None and entry is None:
        yield at(found, f"{spelled(found)} is not in {context.lockfile}: run `pinguard lock` to resolve and "
                        "record it")
