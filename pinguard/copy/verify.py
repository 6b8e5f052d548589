"""Every copy the lock records checked where it is: each locked digest still served, byte for byte.

For each copy: its tag names the locked digest; the locked manifest and each platform's image are
fetched by digest and hashed; and every blob those images name is looked up at its size. Anything
else is a problem, said with the copy it was found in: a copy deleted, a tag moved, a blob gone.
"""
from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pinguard.copy.plan import image_blobs
from pinguard.errors import PinguardError
from pinguard.lock.lockfile import Copy, Lock, LockEntry
from pinguard.registry.client import RegistryClient
from pinguard.registry.upload import Uploader


@dataclass(frozen=True)
class CopyCheck:
    checked: int  # copies
    problems: list[str]  # one line each


def verify_copies(client: RegistryClient, lock: Lock, workers: int = 8) -> CopyCheck:
    """Each copy the lock records, checked against its registry."""
    copies = [(entry, copy) for entry in lock for copy in entry.copies]
    with ThreadPoolExecutor(max(workers, 1), thread_name_prefix="pinguard-verify") as pool:
        found = pool.map(lambda pair: list(_problems(client, *pair)), copies)
        problems = [f"{entry.name}:{entry.tag} copied to {copy.to}: {problem}"
                    for (entry, copy), each in zip(copies, found, strict=True) for problem in each]
    return CopyCheck(len(copies), problems)


def _problems(client: RegistryClient, entry: LockEntry, copy: Copy) -> Iterator[str]:
    registry, _, repository = copy.to.partition("/")
    looker = Uploader(client.transport(registry), push=False)
    try:
        tagged = looker.manifest_digest(repository, entry.tag)
        if tagged != entry.digest:
            yield f"tag {entry.tag} is gone" if tagged is None else f"tag {entry.tag} names {tagged}, not the lock's"
        root = looker.manifest(repository, entry.digest)
        if root is None:
            yield f"{entry.digest} is not served"
            return
        images = {digest: f"{platform}'s image" for platform, digest in entry.platforms.items()} if root.is_index else {
            entry.digest: "the image"}
        for digest, image_of in images.items():
            image = root if digest == root.digest else looker.manifest(repository, digest)
            if image is None:
                yield f"{image_of} {digest} is not served"
                continue
            for blob in image_blobs(image):
                if not looker.has_blob(repository, blob.digest, blob.size):
                    yield f"blob {blob.digest} of {image_of} {digest} is not served"
    except PinguardError as exc:
        yield str(exc)
