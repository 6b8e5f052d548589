"""What a rebuild changed: the image a lock entry pinned against the one its tag points to now.

A reviewer moving a pin forward wants to know what the new image is: when it was built,
which labels changed (`org.opencontainers.image.version` above all), how many layers it
has, and which frozen tag names it now. For an index the images compared are those of
one platform, `linux/amd64` or else the first one locked.

A GitHub Actions ref that moved (`ActionMove`) is explained by its commits: the old and
the new, the frozen tag of each, and every tag on each, so that a reviewer sees which
release the ref now stands for.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pinguard import untrusted_json
from pinguard.errors import RegistryError
from pinguard.lock.actions import ActionEntry
from pinguard.lock.lockfile import LockEntry
from pinguard.provenance.changes import differences
from pinguard.reference import parse

if TYPE_CHECKING:
    from pinguard.registry.client import RegistryClient

_PREFERRED_PLATFORM = "linux/amd64"


@dataclass(frozen=True)
class Image:
    """What an image's manifest and config say about it."""

    digest: str
    created: str | None
    labels: Mapping[str, str]
    layers: int


@dataclass(frozen=True)
class LabelChange:
    key: str
    old: str | None  # None: added
    new: str | None  # None: removed


@dataclass(frozen=True)
class Rebuild:
    old: LockEntry
    new: LockEntry
    platform: str | None  # the platform whose images are compared; None for an image locked without one
    before: Image
    after: Image

    @property
    def label_changes(self) -> list[LabelChange]:
        old, new = self.before.labels, self.after.labels
        return [LabelChange(key, old.get(key), new.get(key))
                for key in sorted(old.keys() | new.keys()) if old.get(key) != new.get(key)]

    @property
    def provenance_changes(self) -> list[tuple[str, str, str]]:
        """(what, old, new): a new builder, source revision, signer or SBOM count, where provenance was checked."""
        return differences(self.old.evidence, self.new.evidence)


@dataclass(frozen=True)
class ActionMove:
    """A locked action ref that points at another commit now, with the tags on each commit."""

    old: ActionEntry
    new: ActionEntry
    old_tags: tuple[str, ...]
    new_tags: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.old.repository}@{self.old.ref}"


def explain(client: RegistryClient, old: LockEntry, new: LockEntry) -> Rebuild:
    """Compare the images behind two entries of one name and tag; the manifests and configs are verified."""
    reference = parse(f"{old.name}:{old.tag}")
    platform = _PREFERRED_PLATFORM if _PREFERRED_PLATFORM in old.platforms else next(iter(old.platforms), None)
    if platform is not None and platform not in new.platforms:
        raise RegistryError(f"{old.name}:{old.tag}: the image it points to now has no {platform} image")
    registry, repository = reference.registry, reference.repository
    before = _image(client, registry, repository, old.platforms[platform] if platform else old.digest)
    after = _image(client, registry, repository, new.platforms[platform] if platform else new.digest)
    return Rebuild(old, new, platform, before, after)


def _image(client: RegistryClient, registry: str, repository: str, digest: str) -> Image:
    manifest = client.cached_manifest(registry, repository, digest).json()
    layers, descriptor = manifest.get("layers"), manifest.get("config")
    if not (isinstance(layers, list) and isinstance(descriptor, dict) and isinstance(descriptor.get("digest"), str)):
        raise RegistryError(f"{registry}/{repository}: {digest} is not an image manifest")
    try:
        config = untrusted_json.loads(client.cached_blob(registry, repository, descriptor["digest"]))
    except (ValueError, UnicodeDecodeError):
        raise RegistryError(f"{registry}/{repository}: image config {descriptor['digest']} is not JSON") from None
    created = config.get("created") if isinstance(config, dict) else None
    settings = config.get("config") if isinstance(config, dict) else None
    labels = settings.get("Labels") if isinstance(settings, dict) else None
    return Image(
        digest=digest,
        created=created if isinstance(created, str) else None,
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
        layers=len(layers),
    )


def text(rebuilds: Sequence[Rebuild], moves: Sequence[ActionMove] = ()) -> str:
    """A few lines a moved tag or action ref, for a terminal."""
    lines: list[str] = []
    for rebuild in rebuilds:
        old, new, before, after = rebuild.old, rebuild.new, rebuild.before, rebuild.after
        lines += [
            f"{old.name}:{old.tag} moved",
            f"  digest      {_change(old.digest, new.digest)}",
            f"  frozen tag  {_change(old.frozen_tag, new.frozen_tag)}",
            f"  created     {_change(before.created, after.created)}" + _on(rebuild.platform),
            f"  layers      {_change(before.layers, after.layers)}",
        ]
        lines += [f"  label       {change.key}: {_label(change, str)}" for change in rebuild.label_changes]
        lines += [f"  {what:<11} {before_value} -> {after_value}"
                  for what, before_value, after_value in rebuild.provenance_changes]
    for move in moves:
        lines += [
            f"{move.name} moved",
            f"  commit      {_change(move.old.commit, move.new.commit)}",
            f"  frozen tag  {_change(move.old.frozen_tag, move.new.frozen_tag)}",
            f"  tags        {_tags(move.old_tags)} -> {_tags(move.new_tags)}",
        ]
    return "".join(line + "\n" for line in lines)


def _tags(tags: Sequence[str], show: Callable[[str], str] = str) -> str:
    return ", ".join(map(show, tags)) if tags else "none"


def markdown(rebuilds: Sequence[Rebuild], moves: Sequence[ActionMove] = ()) -> str:
    """A pull-request body: a table of the moved tags, then what changed in each image; then the moved actions."""
    parts = [_images_markdown(rebuilds)] if rebuilds else []
    if moves:
        parts.append(_actions_markdown(moves))
    return "\n".join(parts)


def _actions_markdown(moves: Sequence[ActionMove]) -> str:
    lines = _table_head("Moved actions",
                        f"Action refs that point to another commit now: {len(moves)}. The lockfile and every "
                        "`uses:` pinned to them move to the new commits.",
                        ["action", "old commit", "new commit", "new frozen tag", "tags on the new commit"])
    for move in moves:
        cells = [_code(move.name), _code(move.old.commit[:12]), _code(move.new.commit[:12]),
                 _code(move.new.frozen_tag) if move.new.frozen_tag else "none", _tags(move.new_tags, _code)]
        lines.append(_row(cells))
    for move in moves:
        lines += [
            "",
            f"### {_code(move.name)}",
            "",
            f"- commit: {_code(move.old.commit)} -> {_code(move.new.commit)}",
            f"- frozen tag: {_change(move.old.frozen_tag, move.new.frozen_tag)}",
            f"- tags on the old commit: {_tags(move.old_tags, _code)}",
            f"- tags on the new commit: {_tags(move.new_tags, _code)}",
        ]
    return "\n".join(lines) + "\n"


def _images_markdown(rebuilds: Sequence[Rebuild]) -> str:
    lines = _table_head("Rebuilt images",
                        f"Moving tags that point to a rebuilt image now: {len(rebuilds)}. "
                        "The lockfile and every file pinning them move to the new digests.",
                        ["image", "old digest", "new digest", "new frozen tag", "created"])
    for rebuild in rebuilds:
        old, new = rebuild.old, rebuild.new
        cells = [_code(f"{old.name}:{old.tag}"), _code(_short(old.digest)), _code(_short(new.digest)),
                 _code(new.frozen_tag) if new.frozen_tag else "none",
                 _change(rebuild.before.created, rebuild.after.created)]
        lines.append(_row(cells))
    for rebuild in rebuilds:
        changes = rebuild.label_changes
        lines += [
            "",
            f"### {_code(f'{rebuild.old.name}:{rebuild.old.tag}')}{_on(rebuild.platform)}",
            "",
            f"- layers: {_change(rebuild.before.layers, rebuild.after.layers)}",
            *(f"- label {_code(change.key)}: {_label(change, _code)}" for change in changes),
            *(f"- {what}: {_code(old_value)} -> {_code(new_value)}"
              for what, old_value, new_value in rebuild.provenance_changes),
        ]
        if not changes:
            lines.append("- no label changed")
    return "\n".join(lines) + "\n"


def _table_head(title: str, summary: str, columns: Sequence[str]) -> list[str]:
    """A section's title and summary, then the head of its table."""
    return [f"## {title}", "", summary, "", _row(columns), _row(["---"] * len(columns))]


def _row(cells: Sequence[str]) -> str:
    """A markdown table row; a `|` inside a cell escaped."""
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _change(old: object, new: object) -> str:
    shown = ["none" if value is None else str(value) for value in (old, new)]
    return f"{shown[0]} -> {shown[1]}" if old != new else f"{shown[0]} (unchanged)"


def _label(change: LabelChange, show: Callable[[str], str]) -> str:
    if change.old is None:
        return f"added {show(change.new or '')}"
    if change.new is None:
        return f"removed (was {show(change.old)})"
    return f"{show(change.old)} -> {show(change.new)}"


def _on(platform: str | None) -> str:
    return f" ({platform})" if platform else ""


def _short(digest: str) -> str:
    algorithm, _, hex_digits = digest.partition(":")
    return f"{algorithm}:{hex_digits[:12]}"


def _code(value: str) -> str:
    """Inline code that holds any text: a fence longer than any run of backticks inside, on one line."""
    value = " ".join(value.splitlines())
    fence = "`" * (max(map(len, re.findall("`+", value)), default=0) + 1)
    padded = f" {value} " if value.startswith("`") or value.endswith("`") else value
    return f"{fence}{padded}{fence}"
