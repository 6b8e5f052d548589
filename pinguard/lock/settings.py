"""What `lock` is told to do where the files leave a choice: a record the policy builds, no I/O."""
from __future__ import annotations

from enum import StrEnum


class WrittenDigest(StrEnum):
    """What `lock` does with a digest written beside a tag that points elsewhere (`trainer:1.0@<a build of 0.9>`):
    the policy's `rules: {tag-digest-mismatch: {lock: …}}`."""

    REFUSE = "refuse"  # lock nothing, name the reference and both digests
    LOCK_TAG = "tag"  # lock the digest the tag points to; `digest-mismatch` reports the written one until `pin`
    KEEP_DIGEST = "digest"  # lock the written digest, recorded `tag_served = false`
