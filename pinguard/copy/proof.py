"""What a target proves it serves: the one judge of a copy, as `copy` confirms it before the lock records it
and as `verify --copies` checks it later.

- A manifest counts when, fetched by its digest, its bytes hash to that digest.
- A tag counts when it names its digest.
- A blob counts when its HEAD answers 200 with its digest (Docker-Content-Digest) or its size
  (Content-Length), contradicting neither (`Uploader.blob_absence`): a registry answering 200 to
  every HEAD proves nothing.
- Deep (`blob_hash_problem`), a blob counts only when its bytes, read a range at a time, hash to its
  digest: the one proof against a registry that answers HEADs truly and serves other bytes.

Each failure is a problem, a line naming the manifest, tag or blob; a registry that refuses or fails
(401, 403, 5xx) raises, as anywhere else.
"""
from __future__ import annotations

import hashlib

from pinguard.copy.plan import Blob
from pinguard.errors import DigestMismatch, PinguardError
from pinguard.registry.manifest import ManifestBody
from pinguard.registry.transport import Transport
from pinguard.registry.upload import CHUNK, BlobReader, Uploader

_ALGORITHMS = ("sha256", "sha512")


class Proof:
    """The problems found so far with what one repository of a target serves."""

    def __init__(self, looker: Uploader, repository: str) -> None:
        self._looker = looker
        self._repository = repository
        self.problems: list[str] = []

    def manifest(self, digest: str, what: str) -> ManifestBody | None:
        """The manifest `digest` (`what` it is, for the problem) as served, its bytes hashing to it; None where it
        is not served or is served as other bytes."""
        try:
            body = self._looker.manifest(self._repository, digest)
        except DigestMismatch as exc:
            self.problems.append(f"{what} {digest}: {exc}")
            return None
        if body is None:
            self.problems.append(f"{what} {digest} is not served")
        return body

    def tag(self, tag: str, digest: str) -> None:
        tagged = self._looker.manifest_digest(self._repository, tag)
        if tagged != digest:
            self.problems.append(f"tag {tag} is gone" if tagged is None else f"tag {tag} names {tagged}, not {digest}")

    def blob(self, blob: Blob, of: str) -> bool:
        """Whether the target proves it holds `blob` (of the manifest `of` names) by its HEAD."""
        reason = self._looker.blob_absence(self._repository, blob.digest, blob.size)
        if reason is not None:
            self.problems.append(f"blob {blob.digest} of {of} is not proven: {reason}")
        return reason is None


def blob_hash_problem(transport: Transport, repository: str, blob: Blob, of: str, chunk: int = CHUNK) -> str | None:
    """What is wrong with the bytes `repository` serves as `blob`, read `chunk` bytes at a time (never the blob
    whole) and hashed; None when they hash to its digest."""
    algorithm = blob.digest.partition(":")[0]
    if algorithm not in _ALGORITHMS:
        return f"blob {blob.digest} of {of}: pinguard hashes only {' and '.join(_ALGORITHMS)}"
    hasher = hashlib.new(algorithm)
    reader = BlobReader(transport, repository, blob.digest)
    try:
        for start in range(0, blob.size, chunk):
            hasher.update(reader.read(start, min(start + chunk, blob.size)))
    except PinguardError as exc:  # a byte range refused or sent wrong: the bytes are not proven either
        return f"blob {blob.digest} of {of} could not be read whole: {exc}"
    found = f"{algorithm}:{hasher.hexdigest()}"
    return None if found == blob.digest else f"blob {blob.digest} of {of} is served as bytes hashing to {found}"
