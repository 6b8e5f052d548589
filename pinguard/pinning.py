"""Pin planning: the new text of every file whose references the lock pins to another digest.

Only the characters of each reference change (see `pinguard.rewrite`); nothing is
written here: `pin` and `update` commit the plan, `run` renders a manifest with it.
"""
from __future__ import annotations

from pinguard.lockfile import Lock, locked_key
from pinguard.rewrite import Edit, apply, pin_edit
from pinguard.scanning import Scan, ScannedFile
from pinguard.sources.base import Found


def plan(result: Scan, lock: Lock) -> tuple[list[tuple[ScannedFile, str]], list[Found]]:
    """The new text of every file that changes, and the references the lock does not know."""
    changes: list[tuple[ScannedFile, str]] = []
    missing: list[Found] = []
    for scanned in result.files:
        edits: list[Edit] = []
        for found in scanned.found:
            key = locked_key(found.reference) if found.reference else None
            if key is None or found.reference is None:
                continue
            entry = lock.get(*key)
            if entry is None:
                missing.append(found)
            elif found.reference.digest != entry.digest:
                edits.append(pin_edit(found, entry.digest))
        if edits:
            changes.append((scanned, apply(scanned.file.text, edits)))
    return changes, missing


def repin(result: Scan, moved: Lock) -> list[tuple[ScannedFile, str]]:
    """The new text of every file pinning a name:tag of `moved`: the plan restricted to those pins.

    References without a digest, and pins of other names, are left alone (`pin`'s work, not `update`'s).
    """
    pinned = Scan([
        ScannedFile(scanned.file, scanned.kind, [
            found for found in scanned.found
            if found.reference is not None and found.reference.digest is not None
            and locked_key(found.reference) in moved.entries
        ])
        for scanned in result.files
    ])
    return plan(pinned, moved)[0]
