"""The copy's name of an image, and the edits that point references at it (`pin --to`).

A copy keeps the source repository's path under the destination: `public.ecr.aws/deep-learning-containers/ray`
copied `--to 123456789012.dkr.ecr.us-east-1.amazonaws.com/mirror` is
`123456789012.dkr.ecr.us-east-1.amazonaws.com/mirror/deep-learning-containers/ray`, with the tag and digest
the lock records. Only a reference written whole in one place is renamed; one whose repository stands apart
from its tag or digest (a values file's `repository:`) is reported, never guessed at.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from pinguard.errors import InvalidReference, PinguardError
from pinguard.lock.lockfile import Lock, LockEntry, locked_key
from pinguard.read.paths import Scan, ScannedFile
from pinguard.reference import parse
from pinguard.sources.base import Found
from pinguard.write.edits import Edit, apply


@dataclass(frozen=True)
class Destination:
    """Where copies go: a registry, and a path prefix under it ("" for none)."""

    registry: str
    prefix: str = ""

    def __str__(self) -> str:
        return f"{self.registry}/{self.prefix}" if self.prefix else self.registry

    def name_for(self, source_name: str) -> str:
        """The copy's repository name (`REGISTRY/PREFIX/<source path>`) for an image named `source_name`."""
        path = parse(source_name).repository
        name = f"{self}/{path}"
        try:
            parse(name)
        except InvalidReference as exc:
            raise PinguardError(f"{source_name} cannot be copied under {self}: {exc}") from None
        return name


def parse_destination(text: str) -> Destination:
    """`REGISTRY[/PREFIX]`, as given to --to."""
    registry, _, prefix = text.partition("/")
    try:
        probe = parse(f"{text}/image")  # the grammar decides what names a registry, as for any reference
    except InvalidReference as exc:
        raise PinguardError(f"--to {text!r}: not REGISTRY[/PREFIX]: {exc}") from None
    if probe.registry != registry or probe.tag is not None or probe.digest is not None:
        raise PinguardError(f"--to {text!r}: must start with a registry host (a name with a dot or a port, "
                            "or localhost), optionally followed by /PREFIX")
    return Destination(registry, prefix)


class Retargeted(NamedTuple):
    changes: list[tuple[ScannedFile, str]]  # the new text of every file that changes
    refused: list[tuple[Found, str]]  # references that could not be renamed, and why


def retarget(scan: Scan, lock: Lock, destination: Destination) -> Retargeted:
    """The edits renaming every locked reference to its copy under `destination`, digest unchanged.

    A reference is renamed only where the lock records a copy there; one already named as its copy is left alone.
    """
    renamed = {(name, entry.tag) for entry in lock for name in _copy_names(entry, destination)}
    changes: list[tuple[ScannedFile, str]] = []
    refused: list[tuple[Found, str]] = []
    for scanned in scan.files:
        edits: list[Edit] = []
        for found in scanned.found:
            key = locked_key(found.reference) if found.reference is not None else None
            if key is None or key in renamed:
                continue
            outcome = _rename(found, lock.get(*key), destination)
            if isinstance(outcome, Edit):
                edits.append(outcome)
            else:
                refused.append((found, outcome))
        if edits:
            changes.append((scanned, apply(scanned.file.text, edits)))
    return Retargeted(changes, refused)


def _copy_names(entry: LockEntry, destination: Destination) -> list[str]:
    name = destination.name_for(entry.name)
    return [copy.to for copy in entry.copies if copy.to == name]


def _rename(found: Found, entry: LockEntry | None, destination: Destination) -> Edit | str:
    """The edit renaming `found`, or why it cannot be renamed."""
    if entry is None:
        return "not in the lock; run `pinguard lock` and `pinguard copy` first"
    if not _copy_names(entry, destination):
        return f"the lock records no copy of {entry.name}:{entry.tag} under {destination}; run `pinguard copy` first"
    assert found.reference is not None
    if found.reference.digest not in (None, entry.digest):
        return f"pinned to {found.reference.digest}, not the locked {entry.digest}; run `pinguard pin` first"
    if found.digest_field is not None or found.rendered is not None or not _written_whole(found):
        return "its repository is written apart from its tag or digest; rename it where it is set"
    name = destination.name_for(entry.name)
    return Edit(found.span.start, found.span.end, f"{name}:{entry.tag}@{entry.digest}")


def _written_whole(found: Found) -> bool:
    """Whether the text at the reference's span is the whole reference (then replacing it renames it)."""
    try:
        written = parse(found.value)
    except InvalidReference:
        return False
    assert found.reference is not None
    return written.with_digest(None) == found.reference.with_digest(None)
