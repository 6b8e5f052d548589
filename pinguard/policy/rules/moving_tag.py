"""moving-tag: a reference names a tag that is re-pointed at every rebuild.

Pinned, a moving tag is safe, but the reader cannot tell which release the
digest is; the lockfile knows the frozen tag serving the same digest, and the
message names it. Which tags move is set by the policy's `tags:` patterns.

PASS: `ray:train-ml-cuda-v1.1.2@sha256:...`
FAIL: `ray:train-ml-cuda-v1.1@sha256:...` (warning: the frozen tag is `train-ml-cuda-v1.1.2`)
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at, spelled
from pinguard.resolve.tags import TagKind
from pinguard.sources.base import Found

ID = "moving-tag"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "off"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    reference = found.reference
    locked = context.locked(found)
    key, entry = (locked.key, locked.entry) if locked is not None else (None, None)
    if reference is None or key is None or context.tag_rules.kind(reference.name, key[1]) is not TagKind.MOVING:
        return
    hint = f"; the frozen tag `{entry.frozen_tag}` serves the locked digest" if entry and entry.frozen_tag else ""
    yield at(found, f"{spelled(found)} names the moving tag `{key[1]}`{hint}")
