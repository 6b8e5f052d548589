"""Every copy the lock records checked where it is, by the judge `copy` confirms with (`pinguard.copy.proof`).

For each copy: its tag names the locked digest; the locked manifest and each platform's image are
fetched by digest and hashed; and every blob those images name is proven by its HEAD (200 with its
digest or its size). With `deep`, every blob so proven is then read back a range at a time and
hashed, which alone catches a registry that answers HEADs truly and serves other bytes. Anything
else is a problem, said with the copy it was found in: a copy deleted, a tag moved, a blob gone.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from pinguard.copy.plan import Blob, image_blobs
from pinguard.copy.proof import Proof, blob_hash_problem
from pinguard.errors import PinguardError
from pinguard.lock.lockfile import Copy, Lock, LockEntry
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import INDEX_TYPES
from pinguard.registry.upload import Uploader

# Progress while blobs are hashed: given the registry of each blob to hash, `done(registry)` as each is (or None).
ProgressLine = Callable[[Iterable[str]], AbstractContextManager[Callable[[str], None] | None]]


@dataclass(frozen=True)
class CopyCheck:
    checked: int  # copies
    problems: list[str]  # one line each


@dataclass(frozen=True)
class _Checked:
    """One copy checked by its HEADs: what is wrong, and the blobs proven so (to hash, when deep)."""

    problems: list[str]
    proven: list[tuple[Blob, str]]  # each blob, and the image it was found in


def verify_copies(client: RegistryClient, lock: Lock, workers: int = 8, *, deep: bool = False,
                  progress: ProgressLine | None = None) -> CopyCheck:
    """Each copy the lock records, checked against its registry; with `deep`, each blob hashed too."""
    copies = [(entry, copy) for entry in lock for copy in entry.copies]
    with ThreadPoolExecutor(max(workers, 1), thread_name_prefix="pinguard-verify") as pool:
        checked = list(pool.map(lambda pair: _check(client, *pair), copies))
        problems = [list(each.problems) for each in checked]
        if deep:
            targets = [(copy.to, each.proven) for (_, copy), each in zip(copies, checked, strict=True)]
            for number, problem in _hash_all(client, pool, targets, progress):
                problems[number].append(problem)
    lines = [f"{entry.name}:{entry.tag} copied to {copy.to}: {problem}"
             for (entry, copy), each in zip(copies, problems, strict=True) for problem in each]
    return CopyCheck(len(copies), lines)


def _hash_all(client: RegistryClient, pool: ThreadPoolExecutor, targets: list[tuple[str, list[tuple[Blob, str]]]],
              progress: ProgressLine | None) -> list[tuple[int, str]]:
    """(number of the copy in `targets`, problem) for each blob whose bytes do not hash to its digest, in order."""
    tasks = [(number, to, blob, of) for number, (to, proven) in enumerate(targets) for blob, of in proven]
    registries = [to.partition("/")[0] for _, to, _, _ in tasks]
    futures = {pool.submit(_hashed, client, to, blob, of): index for index, (_, to, blob, of) in enumerate(tasks)}
    found: dict[int, str | None] = {}
    with nullcontext() if progress is None else progress(registries) as done:
        for future in as_completed(futures):  # told from this thread: the display is written by one thread only
            index = futures[future]
            found[index] = future.result()
            if done is not None:
                done(registries[index])
    return [(tasks[index][0], problem) for index, problem in sorted(found.items()) if problem is not None]


def _hashed(client: RegistryClient, to: str, blob: Blob, of: str) -> str | None:
    registry, _, repository = to.partition("/")
    return blob_hash_problem(client.transport(registry), repository, blob, of)


def _check(client: RegistryClient, entry: LockEntry, copy: Copy) -> _Checked:
    registry, _, repository = copy.to.partition("/")
    proof = Proof(Uploader(client.transport(registry), push=False), repository)
    proven: list[tuple[Blob, str]] = []
    try:
        proof.tag(entry.tag, entry.digest)
        root = proof.manifest(entry.digest, "the index" if entry.media_type in INDEX_TYPES else "the image")
        if root is None:
            return _Checked(proof.problems, proven)
        images = {digest: f"{platform}'s image" for platform, digest in entry.platforms.items()} if root.is_index else {
            entry.digest: "the image"}
        for digest, image_of in images.items():
            image = root if digest == root.digest else proof.manifest(digest, image_of)
            if image is not None:
                of = f"{image_of} {digest}"
                proven += [(blob, of) for blob in dict.fromkeys(image_blobs(image)) if proof.blob(blob, of)]
    except PinguardError as exc:
        proof.problems.append(str(exc))
    return _Checked(proof.problems, proven)
