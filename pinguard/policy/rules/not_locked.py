"""not-locked: every reference, tagged or pinned by digest alone, names an entry of the lockfile.

Without an entry there is no verified digest to pin to or to compare with.
`pinguard lock` (or `pinguard pin --resolve`) resolves and records a tag. A digest
without a tag is locked when an entry of its name (or copied to its name) holds it, as
its index's or a platform image's digest; `pinguard lock` records only tags, so such a
reference is locked by writing the tag it was pinned from beside it. `post-render`,
`run`, `audit` and the admission export judge the same way (`pinguard.lock.locked`).

PASS: `image: nginx:1.25` with `nginx:1.25` in pinguard.lock
PASS: `image: nginx@sha256:aaa...` with `nginx:1.25` locked to `sha256:aaa...`
FAIL: `image: nginx:1.25` and no such entry
FAIL: `image: nginx@sha256:bbb...` and no entry of `nginx` holding `sha256:bbb...`
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
    locked = context.locked(found)
    if locked is None or locked.entry is not None:
        return
    reference = found.reference
    if locked.key is None and reference is not None:
        yield at(found, f"{spelled(found)}: {reference.digest} is not a digest {context.lockfile} holds for "
                        f"{reference.name}: write the tag it was pinned from (`{reference.familiar_name}:TAG@…`) "
                        "and run `pinguard lock`, which records only tagged references")
    else:
        yield at(found, f"{spelled(found)} is not in {context.lockfile}: run `pinguard lock` to resolve and "
                        "record it")
