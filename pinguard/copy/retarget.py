"""The copy's name of an image, and the edits that point references at it (`pin --to`).

A copy keeps the source's registry and repository path under the destination:
`public.ecr.aws/deep-learning-containers/ray` copied `--to 123456789012.dkr.ecr.us-east-1.amazonaws.com/mirror`
is `123456789012.dkr.ecr.us-east-1.amazonaws.com/mirror/public.ecr.aws/deep-learning-containers/ray`, with the
tag and digest the lock records. Keeping the registry makes the naming one to one, so two images can never
share a copy: `docker.io/acme/app` and `ghcr.io/acme/app` are different images. A registry's port becomes
`_PORT` (no host name holds an underscore, so that stays one to one). Without the registry
(`--no-keep-registry`), names that would meet are refused before anything is copied or renamed (`collisions`).

Only a reference written whole in one place is renamed; one whose repository stands apart from its tag or
digest (a values file's `repository:`) is reported, never guessed at.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from pinguard.errors import InvalidReference, PinguardError
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.reference import locked_key, parse
from pinguard.scan.paths import Scan, ScannedFile
from pinguard.sources.base import Found
from pinguard.write.edits import Edit, apply

KEEP_REGISTRY = "--keep-registry"  # what a refused collision suggests
NO_KEEP_REGISTRY = "--no-keep-registry"


@dataclass(frozen=True)
class Destination:
    """Where copies go: a registry, a path prefix under it ("" for none), and whether each copy's path starts
    with its source registry."""

    registry: str
    prefix: str = ""
    keep_registry: bool = True

    def __str__(self) -> str:
        return f"{self.registry}/{self.prefix}" if self.prefix else self.registry

    def name_for(self, source_name: str) -> str:
        """The copy's repository name (`REGISTRY/PREFIX[/<source registry>]/<source path>`) of `source_name`."""
        source = parse(source_name)
        path = f"{_path_component(source.registry, source_name)}/{source.repository}" if self.keep_registry \
            else source.repository
        name = f"{self}/{path}"
        try:
            parse(name)
        except InvalidReference as exc:
            raise PinguardError(f"{source_name} cannot be copied under {self}: {exc}") from None
        return name


def _path_component(registry: str, source_name: str) -> str:
    """A registry host as one path component: lower case, its port after `_`. An IPv6 address has none."""
    if registry.startswith("["):
        raise PinguardError(f"{source_name} cannot be copied keeping its registry: an IPv6 address is no path; "
                            "pass --no-keep-registry")
    return registry.lower().replace(":", "_")


def collisions(lock: Lock, destination: Destination) -> list[str]:
    """A line for each repository this destination would give an image whose name another image of the lock
    has, or is copied to, or would be given too. Empty where every copy's repository is its image's alone
    (the lock itself refuses two images recording one copy: `Lock`)."""
    return [f"{' and '.join(sources)} would share the repository {name}: two images, one name"
            for name, sources in _shared(lock, destination).items()]


def _shared(lock: Lock, destination: Destination) -> dict[str, list[str]]:
    """Each repository under `destination` that images of more than one name would share, and those names."""
    planned: dict[str, dict[str, None]] = {}  # repository -> the names of the images that would go there
    for entry in lock:
        name = _planned(destination, entry.name)
        if name is not None:
            planned.setdefault(name, {})[entry.name] = None
            planned[name].update((other.name, None) for other in lock.of_name(name))
    return {name: list(sources) for name, sources in planned.items() if len(sources) > 1}


def refuse_collisions(lock: Lock, destination: Destination) -> None:
    """Stop before anything is sent or renamed when two images would share a repository."""
    lines = collisions(lock, destination)
    if lines:
        hint = "" if destination.keep_registry else f"; {KEEP_REGISTRY} keeps each source registry in the path"
        raise PinguardError(f"copies under {destination} would mix images of different sources{hint}",
                            details=lines)


def _planned(destination: Destination, source_name: str) -> str | None:
    try:
        return destination.name_for(source_name)
    except PinguardError:  # a name that cannot be copied there claims nothing; copying it says why
        return None


def parse_destination(text: str, *, keep_registry: bool = True) -> Destination:
    """`REGISTRY[/PREFIX]`, as given to --to."""
    registry, _, prefix = text.partition("/")
    try:
        probe = parse(f"{text}/image")  # the grammar decides what names a registry, as for any reference
    except InvalidReference as exc:
        raise PinguardError(f"--to {text!r}: not REGISTRY[/PREFIX]: {exc}") from None
    if probe.registry != registry or probe.tag is not None or probe.digest is not None:
        raise PinguardError(f"--to {text!r}: must start with a registry host (a name with a dot or a port, "
                            "or localhost), optionally followed by /PREFIX")
    return Destination(registry, prefix, keep_registry)


class Retargeted(NamedTuple):
    changes: list[tuple[ScannedFile, str]]  # the new text of every file that changes
    refused: list[tuple[Found, str]]  # references that could not be renamed, and why


def retarget(scan: Scan, lock: Lock, destination: Destination) -> Retargeted:
    """The edits renaming every locked reference to its copy under `destination`, digest unchanged.

    A reference is renamed only where the lock records a copy there that is its image's alone; one already
    named as its copy is left alone.
    """
    shared = {source for sources in _shared(lock, destination).values() for source in sources}
    renamed = {(name, entry.tag) for entry in lock if (name := _copy_name(entry, destination)) is not None}
    changes: list[tuple[ScannedFile, str]] = []
    refused: list[tuple[Found, str]] = []
    for scanned in scan.files:
        edits: list[Edit] = []
        for found in scanned.found:
            key = locked_key(found.reference) if found.reference is not None else None
            if key is None or key in renamed:
                continue
            outcome = _rename(found, lock.get(*key), destination, shared)
            if isinstance(outcome, Edit):
                edits.append(outcome)
            else:
                refused.append((found, outcome))
        if edits:
            changes.append((scanned, apply(scanned.file.text, edits)))
    return Retargeted(changes, refused)


def _copy_name(entry: LockEntry, destination: Destination) -> str | None:
    """The name of the copy the lock records of `entry` under `destination`; None where it records none."""
    name = _planned(destination, entry.name)
    return name if any(copy.to == name for copy in entry.copies) else None


def _rename(found: Found, entry: LockEntry | None, destination: Destination, shared: set[str]) -> Edit | str:
    """The edit renaming `found`, or why it cannot be renamed."""
    if entry is None:
        return "not in the lock; run `pinguard lock` and `pinguard copy` first"
    if entry.name in shared:
        return f"{entry.name} would share its copy's repository under {destination} with another image"
    name = _copy_name(entry, destination)
    if name is None:
        hint = _other_naming(entry, destination)
        return f"the lock records no copy of {entry.name}:{entry.tag} under {destination}{hint}"
    assert found.reference is not None
    if found.reference.digest not in (None, entry.digest):
        return f"pinned to {found.reference.digest}, not the locked {entry.digest}; run `pinguard pin` first"
    if found.digest_field is not None or found.rendered is not None or not _written_whole(found):
        return "its repository is written apart from its tag or digest; rename it where it is set"
    return Edit(found.span.start, found.span.end, f"{name}:{entry.tag}@{entry.digest}")


def _other_naming(entry: LockEntry, destination: Destination) -> str:
    """What to do where the lock records no copy named as `destination` names them: the other naming's flag
    where the copy was named so, else run `copy`."""
    other = replace(destination, keep_registry=not destination.keep_registry)
    name = _copy_name(entry, other)
    if name is None:
        return "; run `pinguard copy` first"
    return f"; it records one at {name}: pass {KEEP_REGISTRY if other.keep_registry else NO_KEEP_REGISTRY}"


def _written_whole(found: Found) -> bool:
    """Whether the text at the reference's span is the whole reference (then replacing it renames it)."""
    try:
        written = parse(found.value)
    except InvalidReference:
        return False
    assert found.reference is not None
    return written.with_digest(None) == found.reference.with_digest(None)
