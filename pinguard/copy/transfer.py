"""Planned images copied to their destination: each blob moved once, manifests last, then all of it
read back from the target before the copy counts.

- A manifest is put unless the target serves it: fetched by digest, its bytes hash to it, and its
  tag names it. Each blob is looked up (HEAD) and skipped only when the copy's repository proves it
  holds it (`Uploader.blob_absence`: 200 with its digest or its size), whether or not its manifest
  is served: a registry answering 200 to every HEAD gets every blob sent.
- A blob the target holds in another repository (copied there this run, or by a copy the lock
  records) is mounted from there; one that several images share is copied once, then mounted
  into the others.
- Otherwise it is read from the source in byte ranges and sent up a range at a time, the next
  range read while the last is sent: no blob is ever held whole. Ranges are asked of the
  source registry through its pacer; where it redirects them to a CDN, the next ranges go
  straight there, unpaced (the quota is the registry's, the CDN has none).
- Manifests are put once every blob of an image is there, children before parents, each
  manifest once however many images of the lock share it (tagged again for each tag). The
  registry hashes every blob at the final PUT of its upload and every manifest it is given,
  so a copy killed at any point serves nothing half-written, and the next run goes on from
  what is complete.
- Then the target is made to prove what it took on its word (`pinguard.copy.proof`, the judge
  `verify --copies` uses too): each manifest put fetched by digest and hashed, its tag looked up,
  each blob not yet proven by a HEAD looked up again. What it does not prove fails the image, which
  the lock then does not record. The target alone is read: the source is not asked again.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from pinguard.copy.plan import Blob, ImagePlan, Node
from pinguard.copy.proof import Proof
from pinguard.errors import PinguardError, RegistryError
from pinguard.provenance.discovery import referrers_tag
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import OCI_INDEX, Descriptor, ManifestBody, sha256_digest
from pinguard.registry.upload import CHUNK, BlobReader, Upload, Uploader

MAX_CHUNK = 64 << 20  # the largest chunk a target may ask for (OCI-Chunk-Min-Length)
# Blobs in flight at once. Each holds two chunks at most (the one sent, the next read), and
# reading one costs twice its size for a moment: 4 workers stay near 100 MB, whatever the layers.
WORKERS = 4


@dataclass
class Tally:
    """What copying one image did (or, in a dry run, would do)."""

    uploaded: int = 0  # blobs
    mounted: int = 0
    skipped: int = 0
    bytes: int = 0  # uploaded
    manifests: int = 0  # put

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.uploaded + other.uploaded, self.mounted + other.mounted, self.skipped + other.skipped,
                     self.bytes + other.bytes, self.manifests + other.manifests)


@dataclass
class Outcome:
    plan: ImagePlan
    tally: Tally
    errors: list[str]
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass
class _Copy:
    """One image's copy while it runs."""

    plan: ImagePlan
    started: float
    tally: Tally = field(default_factory=Tally)
    errors: list[str] = field(default_factory=list)
    missing: list[Node] = field(default_factory=list)  # manifests the target does not serve
    pending: int = 0  # blobs not yet done
    proven: set[str] = field(default_factory=set)  # blobs the target proved it holds by a HEAD
    outcome: Outcome | None = None
    finished: threading.Event = field(default_factory=threading.Event)


class Copier:
    """Copies images (plans) with one pool of workers; `done` hears of each image as it finishes."""

    def __init__(self, client: RegistryClient, *, dry_run: bool = False, workers: int = WORKERS,
                 chunk: int = CHUNK, done: Callable[[Outcome], None] | None = None) -> None:
        self._client = client
        self._dry_run = dry_run
        self._workers = workers
        self._chunk = chunk
        self._done = done
        self._lock = threading.Lock()
        self._holders: dict[tuple[str, str], list[str]] = {}  # (registry, blob digest) -> repositories holding it
        self._firsts: dict[tuple[str, str], threading.Event] = {}  # set once the blob's first copy is over
        # (registry, repository, manifest digest) -> set once its first put is over
        self._manifests_put: dict[tuple[str, str, str], threading.Event] = {}
        self._uploaders: dict[str, Uploader] = {}
        self._pool: ThreadPoolExecutor | None = None

    def copy(self, plans: Sequence[ImagePlan]) -> list[Outcome]:
        self._expect(plans)
        for key, repositories in _recorded_holders(plans).items():
            self._holders[key] = list(repositories)
        copies = [_Copy(plan, time.monotonic()) for plan in plans]
        with ThreadPoolExecutor(self._workers, thread_name_prefix="pinguard-copy") as self._pool:
            for each in copies:
                self._submit(self._inspect, each)
            for each in copies:
                each.finished.wait()
        return [each.outcome for each in copies if each.outcome is not None]

    def _expect(self, plans: Sequence[ImagePlan]) -> None:
        """Every repository this run writes, so that each registry's first token covers them all."""
        for plan in plans:
            self._uploader(plan.target_registry)
        for registry, uploader in self._uploaders.items():
            scopes = [uploader.scope(plan.target_repository) for plan in plans if plan.target_registry == registry]
            self._client.transport(registry).expect(scopes)

    def _submit(self, work: Callable[..., None], each: _Copy, *args: object) -> None:
        assert self._pool is not None
        future: Future[None] = self._pool.submit(work, each, *args)
        future.add_done_callback(lambda done: self._unexpected(done, each))

    def _unexpected(self, future: Future[None], each: _Copy) -> None:
        """A bug in a worker fails its image instead of leaving the run waiting on it forever."""
        error = future.exception()
        if error is not None:
            with self._lock:
                each.errors.append(f"{type(error).__name__}: {error}")
            self._finish(each)

    def _uploader(self, registry: str) -> Uploader:
        with self._lock:
            if registry not in self._uploaders:
                self._uploaders[registry] = Uploader(self._client.transport(registry))
            return self._uploaders[registry]

    def _inspect(self, each: _Copy) -> None:
        """What the target lacks of the image: its manifests not served, and their blobs."""
        plan = each.plan
        uploader = self._uploader(plan.target_registry)
        try:
            each.missing = [node for node in plan.nodes if not self._served(uploader, plan.target_repository, node)]
        except PinguardError as exc:
            each.errors.append(str(exc))
            self._finish(each)
            return
        if not plan.blobs:
            self._manifests(each)
            return
        each.pending = len(plan.blobs)
        for blob in sorted(plan.blobs, key=lambda blob: -blob.size):  # the longest first: they set the pace
            self._submit(self._blob, each, blob)

    def _served(self, uploader: Uploader, repository: str, node: Node) -> bool:
        """Whether the target serves `node`: its bytes by digest (other bytes are an error), its tag naming it."""
        if uploader.manifest(repository, node.body.digest) is None:
            return False
        return node.tag is None or uploader.manifest_digest(repository, node.tag) == node.body.digest

    def _blob(self, each: _Copy, blob: Blob) -> None:
        try:
            self._copy_blob(each, blob)
        except PinguardError as exc:
            with self._lock:
                each.errors.append(f"blob {blob.digest}: {exc}")
        with self._lock:
            each.pending -= 1
            last = each.pending == 0
        if last:
            self._manifests(each)

    def _copy_blob(self, each: _Copy, blob: Blob) -> None:
        plan = each.plan
        registry, repository = plan.target_registry, plan.target_repository
        uploader = self._uploader(registry)
        if uploader.has_blob(repository, blob.digest, blob.size):
            self._count(each, skipped=1)
            self._hold(registry, blob.digest, repository)
            with self._lock:
                each.proven.add(blob.digest)
            return
        key = (registry, blob.digest)
        with self._lock:
            first = self._firsts.get(key)
            mine = first is None
            if first is None:
                first = self._firsts[key] = threading.Event()
        try:
            if not mine:
                first.wait()  # another image is copying it: mount it from there (or skip it) once that is done
                if self._held_in(registry, blob.digest, repository):
                    self._count(each, skipped=1)
                    return
            holder = self._holder(registry, blob.digest, repository)
            if self._dry_run:
                self._would(each, blob, holder)
            else:
                upload = uploader.mount(repository, blob.digest, holder) if holder else uploader.start(repository)
                if upload is None:
                    self._count(each, mounted=1)
                else:
                    self._send(plan, blob, uploader, upload)
                    self._count(each, uploaded=1, sent=blob.size)
            self._hold(registry, blob.digest, repository)
        finally:
            first.set()

    def _would(self, each: _Copy, blob: Blob, holder: str | None) -> None:
        if holder is None:
            self._count(each, uploaded=1, sent=blob.size)
        else:
            self._count(each, mounted=1)

    def _send(self, plan: ImagePlan, blob: Blob, uploader: Uploader, upload: Upload) -> None:
        """The blob read from the source a range at a time, each range sent as it is read."""
        size = max(self._chunk, upload.min_chunk)
        if size > MAX_CHUNK:
            raise RegistryError(f"{uploader.registry} wants chunks of {upload.min_chunk} bytes at least; "
                                f"pinguard sends {MAX_CHUNK} at most")
        ranges = [(start, min(start + size, blob.size)) for start in range(0, blob.size, size)]
        repository = plan.target_repository
        reader = BlobReader(self._client.transport(plan.registry), plan.repository, blob.digest)
        if len(ranges) <= 1:
            uploader.finish(repository, upload, blob.digest, blob.size, reader.read(*ranges[0]) if ranges else b"")
            return
        with ThreadPoolExecutor(1, thread_name_prefix="pinguard-read") as ahead:
            following = ahead.submit(reader.read, *ranges[0])
            for number in range(len(ranges)):
                data = following.result()
                if number + 1 == len(ranges):
                    uploader.finish(repository, upload, blob.digest, blob.size, data)
                else:
                    following = ahead.submit(reader.read, *ranges[number + 1])
                    upload = uploader.append(repository, upload, data)

    def _manifests(self, each: _Copy) -> None:
        """The manifests the target lacks put, children before parents; then the image is done."""
        if each.errors:
            self._finish(each)
            return
        plan = each.plan
        uploader = self._uploader(plan.target_registry)
        unlisted: dict[str, list[Descriptor]] = {}  # referrers a target without the referrers API must be told of
        try:
            for node in each.missing:
                if not self._dry_run:
                    read = self._put_once(uploader, plan.target_repository, node)
                    if node.subject is not None and node.listed_as is not None and read is False:
                        unlisted.setdefault(node.subject, []).append(node.listed_as)
                each.tally.manifests += 1
            for subject, listed in unlisted.items():
                _list_referrers(uploader, plan.target_repository, subject, listed)
                each.tally.manifests += 1
            if not self._dry_run:
                each.errors.extend(_unproven(uploader, each))
        except PinguardError as exc:
            each.errors.append(str(exc))
        self._finish(each)

    def _put_once(self, uploader: Uploader, repository: str, node: Node) -> bool | None:
        """`node` put, each manifest once however many images share it (two tags of one image): a registry
        given one manifest twice at once may refuse the index over it. Another image's put is waited for; then an
        untagged manifest is not sent again (None), a tagged one is, to tag it. Whether the registry read its
        subject, as `_put` says."""
        key = (uploader.registry, repository, node.body.digest)
        with self._lock:
            first = self._manifests_put.get(key)
            mine = first is None
            if first is None:
                first = self._manifests_put[key] = threading.Event()
        if not mine:
            first.wait()
            if node.tag is None:
                return None
        try:
            return _put(uploader, repository, node)
        finally:
            first.set()

    def _finish(self, each: _Copy) -> None:
        with self._lock:
            if each.finished.is_set():
                return
            each.outcome = Outcome(each.plan, each.tally, each.errors, time.monotonic() - each.started)
            if self._done is not None:
                self._done(each.outcome)
            each.finished.set()

    def _count(self, each: _Copy, *, skipped: int = 0, mounted: int = 0, uploaded: int = 0, sent: int = 0) -> None:
        with self._lock:
            each.tally.skipped += skipped
            each.tally.mounted += mounted
            each.tally.uploaded += uploaded
            each.tally.bytes += sent

    def _hold(self, registry: str, digest: str, repository: str) -> None:
        with self._lock:
            held = self._holders.setdefault((registry, digest), [])
            if repository not in held:
                held.append(repository)

    def _held_in(self, registry: str, digest: str, repository: str) -> bool:
        with self._lock:
            return repository in self._holders.get((registry, digest), ())

    def _holder(self, registry: str, digest: str, repository: str) -> str | None:
        """Another repository of `registry` known to hold the blob."""
        with self._lock:
            return next((held for held in self._holders.get((registry, digest), ()) if held != repository), None)


def _unproven(uploader: Uploader, each: _Copy) -> list[str]:
    """What the target does not prove of the image: the manifests put (fetched by digest and hashed, their tags
    looked up), and the blobs no HEAD has proven yet (those sent, mounted or copied by another image)."""
    proof = Proof(uploader, each.plan.target_repository)
    for node in each.missing:
        proof.manifest(node.body.digest, "manifest")
        if node.tag is not None:
            proof.tag(node.tag, node.body.digest)
    of = {blob.digest: node.body.digest for node in reversed(each.plan.nodes) for blob in node.blobs}
    for blob in each.plan.blobs:
        if blob.digest not in each.proven:
            proof.blob(blob, f"manifest {of[blob.digest]}")
    return proof.problems


def _put(uploader: Uploader, repository: str, node: Node) -> bool:
    try:
        return uploader.put_manifest(repository, node.tag or node.body.digest, node.body)
    except RegistryError as exc:
        if not node.left_out:
            raise
        raise RegistryError(f"{exc}; it lists {node.left_out} manifests not copied (other platforms), and a registry "
                            "that checks what an index lists refuses it: copy them too (--all-platforms)") from None


def _recorded_holders(plans: Iterable[ImagePlan]) -> dict[tuple[str, str], list[str]]:
    """(registry, blob digest) -> repositories of the registry each plan copies to that hold its blobs: those the
    lock records copies in, and the source's own where it copies within one registry.

    A copy deleted since costs nothing: a mount the registry cannot make starts an upload instead.
    """
    holders: dict[tuple[str, str], list[str]] = {}
    for plan in plans:
        for name in [copy.to for copy in plan.entry.copies] + [f"{plan.registry}/{plan.repository}"]:
            registry, _, repository = name.partition("/")
            if registry == plan.target_registry and name != plan.target:
                for blob in plan.blobs:
                    known = holders.setdefault((registry, blob.digest), [])
                    if repository not in known:
                        known.append(repository)
    return holders


def _list_referrers(uploader: Uploader, repository: str, subject: str, listed: Sequence[Descriptor]) -> None:
    """Referrers added to the referrers tag of `subject` (an index of them), as the OCI spec has clients do
    where a registry has no referrers API."""
    tag = referrers_tag(subject)
    if tag is None:
        return
    held = uploader.manifest(repository, tag)
    listing = held.json().get("manifests") if held is not None and held.is_index else None
    entries = [entry for entry in listing if isinstance(entry, dict)] if isinstance(listing, list) else []
    known = {entry.get("digest") for entry in entries}
    entries.extend(_entry(descriptor) for descriptor in listed if descriptor.digest not in known)
    data = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries},
                      separators=(",", ":")).encode()
    uploader.put_manifest(repository, tag, ManifestBody(data, sha256_digest(data), OCI_INDEX))


def _entry(descriptor: Descriptor) -> dict[str, object]:
    entry: dict[str, object] = {"mediaType": descriptor.media_type, "digest": descriptor.digest,
                                "size": descriptor.size}
    if descriptor.artifact_type:
        entry["artifactType"] = descriptor.artifact_type
    if descriptor.annotations:
        entry["annotations"] = descriptor.annotations
    return entry
