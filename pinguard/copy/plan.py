"""What copying one lock entry takes: its manifests, children before parents, and the blobs each needs.

Of an index, the manifests of the platforms the lock records are copied (all of them with
`every_platform`), with the index entries attached to them: BuildKit's attestation manifests
(`vnd.docker.reference.digest`) and SOCI indexes (`com.amazon.soci.image-manifest-digest`).
The index itself is copied byte for byte, so that its digest, the one pinned, is served.

With `referrers`, what refers to the image's manifests comes too, and what refers to that in
turn: referrers the OCI API lists, or where a registry has no such API the referrers tag
(`sha256-HEX`, an index of them); and cosign's `sha256-HEX.sig`, `.att` and `.sbom` tags,
which cosign writes whatever the registry offers.

Manifests come from the source by digest, hashed (and from the cache when there: content
cannot go stale), so a plan costs no request the cache can answer, tag lists and referrers aside.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pinguard.copy.retarget import Destination
from pinguard.errors import NotFound, PinguardError, RegistryError
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.provenance.discovery import COSIGN_SUFFIXES, cosign_tag, referrers_tag
from pinguard.reference import is_digest, parse
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import Descriptor, ManifestBody, Platform, select_platforms

MAX_MANIFESTS = 512  # in one image's copy, referrers included: a source listing more is not one to trust
_MAX_DEPTH = 4  # indexes within indexes
# Index entries that belong to the image an annotation names: BuildKit attestations, SOCI indexes.
_ATTACHED_TO = ("vnd.docker.reference.digest", "com.amazon.soci.image-manifest-digest")
_SCHEMA_1 = ("application/vnd.docker.distribution.manifest.v1+json",
             "application/vnd.docker.distribution.manifest.v1+prettyjws")


@dataclass(frozen=True)
class Blob:
    digest: str
    size: int


@dataclass(frozen=True)
class Node:
    """One manifest to copy, exactly as the source serves it."""

    body: ManifestBody
    blobs: tuple[Blob, ...]  # its config and layers; none for an index
    tag: str | None = None  # the tag it goes under on the target; None: by digest only
    # Where the referrers API listed it: the subject and the entry, for a target without that API.
    subject: str | None = None
    listed_as: Descriptor | None = None
    left_out: int = 0  # of an index, the entries not copied (other platforms)


@dataclass(frozen=True)
class Selection:
    """What of each image is copied."""

    platforms: tuple[Platform, ...] = ()  # none: the platforms the lock records
    every_platform: bool = False
    referrers: bool = False


@dataclass(frozen=True)
class ImagePlan:
    entry: LockEntry
    registry: str  # where it is copied from
    repository: str
    target: str  # the copy's repository name, REGISTRY/PATH
    nodes: tuple[Node, ...]  # children before parents: the image (its root last), then what refers to it

    @property
    def target_registry(self) -> str:
        return self.target.partition("/")[0]

    @property
    def target_repository(self) -> str:
        return self.target.partition("/")[2]

    @property
    def blobs(self) -> list[Blob]:
        """Every blob of every manifest, each once."""
        return list({blob.digest: blob for node in self.nodes for blob in node.blobs}.values())


def plan_lock(client: RegistryClient, lock: Lock, destination: Destination, selection: Selection,
              workers: int) -> tuple[list[ImagePlan], list[str]]:
    """Each entry's plan (read from the source), and a line for each entry that could not be planned."""
    def plan(entry: LockEntry) -> ImagePlan | str:
        try:
            return plan_copy(client, entry, destination.name_for(entry.name), selection)
        except PinguardError as exc:
            return f"{entry.name}:{entry.tag}: {exc}"

    with ThreadPoolExecutor(max(workers, 1), thread_name_prefix="pinguard-plan") as pool:
        planned = list(pool.map(plan, lock))
    return [p for p in planned if isinstance(p, ImagePlan)], [p for p in planned if isinstance(p, str)]


def plan_copy(client: RegistryClient, entry: LockEntry, target: str, selection: Selection) -> ImagePlan:
    """The manifests and blobs that copying `entry` to the repository `target` takes."""
    source = parse(entry.name)
    walk = _Walk(client, source.registry, source.repository)
    root = client.cached_manifest(source.registry, source.repository, entry.digest)
    chosen = _chosen(root, entry, selection) if root.is_index else None
    walk.tree(root, chosen, tag=entry.tag)
    if selection.referrers:
        walk.referrers([root.digest, *(d.digest for d in chosen or () if d.platform and not d.is_artifact)])
    return ImagePlan(entry, source.registry, source.repository, target, tuple(walk.nodes.values()))


def _chosen(index: ManifestBody, entry: LockEntry, selection: Selection) -> list[Descriptor]:
    """The entries of the index to copy: the wanted platforms' images, and what is attached to them."""
    entries = index.descriptors()
    if selection.every_platform:
        return entries
    wanted = set((select_platforms(index, selection.platforms) if selection.platforms else entry.platforms).values())
    if not wanted:
        raise RegistryError(f"{entry.name}:{entry.tag}: the lock records no platform of this index; "
                            "name one (--platform) or copy them all (--all-platforms)")
    missing = wanted - {d.digest for d in entries}
    if missing:
        raise RegistryError(f"{entry.name}:{entry.tag}: the lock's platform image {min(missing)} is not in its "
                            f"index {index.digest}")
    return [d for d in entries
            if d.digest in wanted or any(d.annotations.get(key) in wanted for key in _ATTACHED_TO)]


class _Walk:
    """The manifests of one image gathered, each once, children before parents."""

    def __init__(self, client: RegistryClient, registry: str, repository: str) -> None:
        self._client = client
        self._registry = registry
        self._repository = repository
        self.nodes: dict[tuple[str, str | None], Node] = {}

    def tree(self, body: ManifestBody, chosen: Sequence[Descriptor] | None = None, *, tag: str | None = None,
             subject: str | None = None, listed_as: Descriptor | None = None, depth: int = 0) -> None:
        """`body` and what it needs (of an index, `chosen` of its entries, else all of them)."""
        left_out = 0
        if body.is_index:
            if depth >= _MAX_DEPTH:
                raise RegistryError(f"{self._where}: index {body.digest} nests indexes more than {_MAX_DEPTH} deep")
            entries = body.descriptors()
            for entry in entries if chosen is None else chosen:
                self.tree(self._manifest(entry.digest), depth=depth + 1)
            left_out = 0 if chosen is None else len(entries) - len(chosen)
            blobs: tuple[Blob, ...] = ()
        else:
            blobs = image_blobs(body)
        self._add(Node(body, blobs, tag, subject, listed_as, left_out))

    def referrers(self, subjects: Iterable[str]) -> None:
        """What refers to `subjects`, and to those referrers in turn."""
        queue = deque(dict.fromkeys(subjects))
        seen = set(queue)
        while queue:
            subject = queue.popleft()
            for found in self._referrers_of(subject):
                if found not in seen:
                    seen.add(found)
                    queue.append(found)

    def _referrers_of(self, subject: str) -> list[str]:
        """Add what refers to `subject`; the digests of those referrers."""
        found: list[str] = []
        listed = self._client.referrers(self._registry, self._repository, subject)
        for entry in listed or ():
            self.tree(self._manifest(entry.digest), subject=subject, listed_as=entry)
            found.append(entry.digest)
        tags = set(self._client.tags(self._registry, self._repository))
        schemes = [cosign_tag(subject, suffix) for suffix in COSIGN_SUFFIXES]
        if listed is None:  # no referrers API: the referrers tag stands in for it
            schemes.insert(0, referrers_tag(subject))
        for tag in schemes:
            if tag is not None and tag in tags:
                body = self._tagged(tag)
                if body is not None:
                    self.tree(body, tag=tag)
                    found.extend([d.digest for d in body.descriptors()] if body.is_index else [body.digest])
        return found

    def _tagged(self, tag: str) -> ManifestBody | None:
        """What `tag` points to; None when it went since the tags were listed."""
        try:
            return self._client.manifest_for_tag(self._registry, self._repository, tag)
        except NotFound:
            return None

    def _manifest(self, digest: str) -> ManifestBody:
        return self._client.cached_manifest(self._registry, self._repository, digest)

    def _add(self, node: Node) -> None:
        key = (node.body.digest, node.tag)
        if key not in self.nodes:
            if len(self.nodes) >= MAX_MANIFESTS:
                raise RegistryError(f"{self._where}: more than {MAX_MANIFESTS} manifests to copy for one image")
            self.nodes[key] = node

    @property
    def _where(self) -> str:
        return f"{self._registry}/{self._repository}"


def image_blobs(body: ManifestBody) -> tuple[Blob, ...]:
    """The config and layers an image manifest (or an artifact's) needs."""
    if body.media_type in _SCHEMA_1:
        raise RegistryError(f"manifest {body.digest} is Docker schema 1, which pinguard does not copy")
    document = body.json()
    config, layers = document.get("config"), document.get("layers", [])
    if not isinstance(config, dict) or not isinstance(layers, list):
        raise RegistryError(f"manifest {body.digest} has no config, or its layers are not a list")
    return tuple(_blob(entry, body.digest) for entry in (config, *layers))


def _blob(entry: object, manifest: str) -> Blob:
    digest = entry.get("digest") if isinstance(entry, dict) else None
    size = entry.get("size") if isinstance(entry, dict) else None
    if not isinstance(digest, str) or not is_digest(digest) or type(size) is not int or size < 0:
        raise RegistryError(f"manifest {manifest} lists a blob without a valid digest and size")
    return Blob(digest, size)
