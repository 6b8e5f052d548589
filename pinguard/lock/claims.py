"""What a lock entry claims of its image, held against the image's bytes: media type, size, platforms.

An entry's `media_type`, `size` and `platforms` are derived from the bytes of its manifest or index,
as the resolver derives them: for an index, every runnable platform it lists (`platforms_of`); for a
single image, the platform its config names, mapped to the image's own digest. `held_against` says
each claim the bytes contradict, a line naming the field, and gives the entry as the bytes have it,
so that `verify` reports the same differences that `lock` and `update` correct. Its `frozen_tag`
is no claim of the bytes: where it names another digest, `with_frozen_tag` adds that.

Records only: the bytes, and a single image's platform, are handed in; nothing here reaches a registry.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from pinguard.errors import RegistryError
from pinguard.lock.lockfile import LockEntry, toml_string
from pinguard.registry.manifest import ManifestBody, Platform, media_type_of, platforms_of
from pinguard.untrusted_text import shown


@dataclass(frozen=True)
class Claims:
    """An entry held against its image: each claim contradicted, a line naming the field, and the entry as it
    should read (the same entry when nothing is)."""

    entry: LockEntry
    differences: tuple[str, ...] = ()

    @property
    def corrections(self) -> list[str]:
        """What `lock` and `update` warn of, writing the entry as it should read: a line for each field."""
        return [f"{self.entry.name}:{self.entry.tag}: {line}; corrected" for line in self.differences]

    def with_frozen_tag(self, points_to: str | None, alias: str | None) -> Claims:
        """The entry's `frozen_tag` points elsewhere (`points_to`; None: not served): `alias`, the frozen tag
        found serving the locked digest (None: none), replaces it."""
        said = self.entry.frozen_tag
        assert said is not None
        where = "the registry no longer serves it" if points_to is None else f"it points to {points_to}"
        alias = None if alias == said else alias
        found = f"; {shown(alias)} serves the locked digest" if alias else ""
        line = f"frozen_tag: the lock says {shown(said)}, {where}{found}"
        return Claims(replace(self.entry, frozen_tag=alias), (*self.differences, line))


def held_against(entry: LockEntry, body: ManifestBody, image_platform: Callable[[ManifestBody], Platform]) -> Claims:
    """`entry`'s claims held against `body`, the bytes of its digest; `image_platform` reads the platform a
    single image's config names (it is not called for an index).

    Bytes that declare no media type are read by their shape, as the lock's media type where that shape
    admits it: the bytes alone cannot tell an OCI manifest from a Docker one that does not say.
    """
    if body.digest != entry.digest:
        raise ValueError(f"{entry.name}:{entry.tag}: the bytes of {body.digest}, not of {entry.digest}")
    read = ManifestBody(body.data, body.digest, media_type_of(body.data, entry.media_type))
    platforms = platforms_of(read) if read.is_index else {str(image_platform(read)): read.digest}
    try:
        derived = replace(entry, media_type=read.media_type, size=len(read.data), platforms=platforms)
    except ValueError as exc:  # bytes no lock entry can hold (a media type that is no image's)
        raise RegistryError(f"{entry.name}@{entry.digest}: {exc}") from None
    return Claims(derived, tuple(_differences(entry, derived, read.is_index)))


def _differences(entry: LockEntry, derived: LockEntry, is_index: bool) -> list[str]:
    lines = []
    if entry.media_type != derived.media_type:
        lines.append(f"media_type: the lock says {shown(entry.media_type)}, the bytes are {shown(derived.media_type)}")
    if entry.size != derived.size:
        lines.append(f"size: the lock says {entry.size}, the bytes are {derived.size}")
    for platform in sorted(entry.platforms.keys() | derived.platforms.keys()):
        said, listed = entry.platforms.get(platform), derived.platforms.get(platform)
        if said != listed:
            lock_says = "the lock leaves it out" if said is None else f"the lock says {said}"
            lines.append(f"platforms.{shown(toml_string(platform))}: {lock_says}, "
                         f"{_bytes_say(platform, said, listed, derived, is_index)}")
    return lines


def _bytes_say(platform: str, said: str | None, listed: str | None, derived: LockEntry, is_index: bool) -> str:
    if is_index:
        return f"the index lists {listed}" if listed else f"the index lists no {shown(platform)} image"
    [own] = derived.platforms  # a single image: one platform, its own digest
    return f"the image is {listed}" if said is not None and listed is not None else f"the image is {shown(own)}"
