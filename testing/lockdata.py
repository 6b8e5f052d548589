"""Lockfiles for offline tests: every reference locked to a digest derived from its name and tag.

The digests are test data, not any real image's; they are the same on every
machine, so golden files can hold them.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable

from pinguard.lock.actions import ActionEntry
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.reference import locked_key
from pinguard.sources.base import ActionUse, Found

INDEX = "application/vnd.oci.image.index.v1+json"  # the media type of an entry with a platform map


def locked_test_digest(name: str, tag: str) -> str:
    return "sha256:" + hashlib.sha256(f"{name}:{tag}".encode()).hexdigest()


def locked_test_commit(repository: str, ref: str) -> str:
    return hashlib.sha1(f"{repository}@{ref}".encode()).hexdigest()


def lock_for(found: Iterable[Found], uses: Iterable[ActionUse] = ()) -> Lock:
    """Every reference locked to its test digest; every action's ref to its test commit (a commit written, to
    itself)."""
    entries = []
    for item in found:
        key = locked_key(item.reference) if item.reference else None
        if key is not None:
            entries.append(LockEntry(
                name=key[0], tag=key[1], digest=locked_test_digest(*key),
                media_type="application/vnd.oci.image.manifest.v1+json", size=0, tag_kind="other",
                frozen_tag=None, resolved_at="2026-11-30T00:00:00Z", platforms={},
            ))
    return Lock().with_entries(entries).with_actions(_action_entries(uses))


def _action_entries(uses: Iterable[ActionUse]) -> list[ActionEntry]:
    entries: dict[tuple[str, str], ActionEntry] = {}
    for use in uses:
        if use.action is None or use.locked_ref is None:
            continue
        ref = use.locked_ref
        commit = use.action.ref if use.action.pinned else locked_test_commit(use.action.repository, ref)
        kind = "commit" if ref == commit else "tag"
        entries[(use.action.repository, ref)] = ActionEntry(use.action.repository, ref, commit, kind, None,
                                                            "2026-11-30T00:00:00Z")
    return list(entries.values())
