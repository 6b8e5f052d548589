"""Whether the lock holds a reference: the one meaning of "locked" that `check`, `post-render`, `run`, `audit`
and the admission export share.

A digest is held by an entry when it is the entry's own (the index, or only manifest) or
one of its platform images' (runtimes report the manifest they pulled for their platform).
A reference is locked when:

- it has a tag (or neither tag nor digest: `latest`): the entry of its name and tag
  exists (`Lock.get`, so a copy's name counts) and holds its digest, if it has one;
- it has a digest and no tag: an entry of its name, or copied to its name, holds the
  digest. A digest an entry of another name holds does not count: the name says where
  the image is pulled from, and only the pair is what the lock recorded.

The admission export judges what the API server sees, the digest alone: it admits every
digest `held` by an entry (`admitted`). A digest names its content, so what it admits is
always content the lock holds; the name is checked by everything that runs before the
cluster does (`check`, `post-render`, `run`) and by `audit`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.reference import locked_key

if TYPE_CHECKING:
    from pinguard.reference import Reference


@dataclass(frozen=True)
class Locked:
    """What the lock says of one reference."""

    key: tuple[str, str] | None  # the (name, tag) it stands for; None for a digest without a tag
    entry: LockEntry | None  # the entry holding it; for a tag holding another digest, the tag's entry
    locked: bool  # `entry` holds the reference's digest, or it has none

    @property
    def mismatch(self) -> bool:
        """Whether its tag is locked, but to another digest than the one written."""
        return self.entry is not None and not self.locked


def held(entry: LockEntry) -> frozenset[str]:
    """The digests an entry vouches for: its own and each platform image's."""
    return frozenset((entry.digest, *entry.platforms.values()))


def admitted(lock: Lock) -> set[str]:
    """Every digest some entry holds: what the admission export lets through."""
    return {digest for entry in lock for digest in held(entry)}


def find(lock: Lock, reference: Reference) -> Locked:
    """What the lock says of `reference` (see the module's docstring)."""
    key = locked_key(reference)
    digest = reference.digest
    if key is not None:
        entry = lock.get(*key)
        return Locked(key, entry, entry is not None and (digest is None or digest in held(entry)))
    holding = [entry for entry in lock.of_name(reference.name) if digest in held(entry)]
    # The entry whose own digest it is, before one that holds it as a platform image's.
    holding.sort(key=lambda entry: entry.digest != digest)
    return Locked(None, holding[0] if holding else None, bool(holding))
