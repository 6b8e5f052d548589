"""tag-digest-mismatch: a digest written beside a tag is one that tag pointed to when it was locked.

`image: trainer:1.0@sha256:<a build of 0.9>` reads as release 1.0 and runs 0.9: a
downgrade that the digest alone would make look verified. `pinguard lock` asks the tag
where it points, and the option `lock` says what it does when that is elsewhere:

- `refuse` (default): lock nothing, name the reference and both digests, exit 2;
- `tag`: lock the digest the tag points to (`digest-mismatch` then reports the written
  one until `pinguard pin` replaces it);
- `digest`: lock the written digest and record `tag_served = false` in the entry: this
  rule reports every reference to it, and `pinguard verify` calls it `unserved`.

PASS: `trainer:1.0@sha256:aaa...` locked while `trainer:1.0` pointed to `sha256:aaa...`
FAIL: `trainer:1.0@sha256:bbb...` locked with `lock: digest` while `trainer:1.0` pointed to `sha256:aaa...`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.lock.settings import WrittenDigest
from pinguard.policy.rules.common import Conf, Context, at, spelled
from pinguard.sources.base import Found

ID = "tag-digest-mismatch"
TYPE: Final = "reference"
CONF: dict[str, object] = {"lock": tuple(WrittenDigest)}  # what `lock` does with a digest its tag does not serve
DEFAULT: dict[str, object] = {"level": "error", "lock": WrittenDigest.REFUSE}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    locked = context.locked(found)
    entry = locked.entry if locked is not None and locked.key is not None else None  # a digest alone names no tag
    if entry is not None and not entry.tag_served:
        yield at(found, f"{spelled(found)}: {context.lockfile} holds {entry.digest} for {entry.name}:{entry.tag}, "
                        "which that tag did not point to when it was locked: nothing vouches that it is a build "
                        "of that tag; write the digest the tag points to, or a tag that points to this one")
