"""digest-mismatch: a pinned digest is one the lockfile holds for that tag: its index's or a platform image's.

A digest edited by hand, or left behind when the lock moved on, pins something
other than what was verified. `pinguard pin` writes the locked one.

PASS: `nginx:1.25@sha256:aaa...` with `nginx:1.25` locked to `sha256:aaa...`
FAIL: `nginx:1.25@sha256:bbb...` with `nginx:1.25` locked to `sha256:aaa...`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at, spelled
from pinguard.sources.base import Found

ID = "digest-mismatch"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    reference, locked = found.reference, context.locked(found)
    if reference is not None and locked is not None and locked.mismatch and locked.entry is not None:
        entry = locked.entry
        yield at(found, f"{spelled(found)} is pinned to {reference.digest}, but {context.lockfile} has "
                        f"{entry.digest} for {entry.name}:{entry.tag}: run `pinguard pin`")
