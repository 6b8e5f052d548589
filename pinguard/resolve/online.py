"""What online work shares: one registry client for the run, and resolving with progress.

Importing this module loads the network stack; offline commands never do (`pinguard.lock.sync`
imports it only when something must be resolved).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from pinguard.errors import PinguardError
from pinguard.lock.lockfile import LockEntry
from pinguard.options import Options
from pinguard.progress import Progress
from pinguard.reference import Reference
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.resolve.resolved import Resolved
from pinguard.resolve.resolver import Resolver


def open_client(options: Options) -> RegistryClient:
    """A client for this run: one pacer per registry, one deadline, the cache under options.cache_dir."""
    return RegistryClient(options.registry, RegistryCache(options.cache_dir))


def resolve_references(references: Sequence[Reference],
                       options: Options) -> dict[Reference, Resolved | PinguardError]:
    """Each reference resolved (or its error), with progress on a terminal while registries are waited on.

    With `options.provenance`, each resolved image also carries what was found of its provenance.
    """
    with open_client(options) as client:
        progress = Progress.on_terminal(options.stderr, options.quiet, (r.registry for r in dict.fromkeys(references)),
                                        client.held_to)
        try:
            outcomes = Resolver(client, options.platforms, options.tag_rules).resolve_all(
                references, None if progress is None else lambda reference: progress.done(reference.registry))
        finally:
            if progress is not None:
                progress.clear()
        if options.provenance:
            resolved = {ref: outcome for ref, outcome in outcomes.items() if isinstance(outcome, Resolved)}
            looked = with_evidence(client, list(resolved.values()), options)
            outcomes.update(zip(resolved, looked, strict=True))
        return outcomes


_Image = TypeVar("_Image", Resolved, LockEntry)


def with_evidence(client: RegistryClient, images: Sequence[_Image], options: Options) -> list[_Image | PinguardError]:
    """Each image (resolved, or a lock entry) with its provenance found now, or the error that stopped the search."""
    from pinguard.provenance.gather import gather_all  # cryptography: only when provenance is asked for

    found = gather_all(client, [(image.name, image.digest, image.platforms) for image in images], options.trust)
    return [evidence if isinstance(evidence, PinguardError) else replace(image, evidence=evidence)
            for image, evidence in zip(images, found, strict=True)]


def entries_with_evidence(client: RegistryClient, entries: Sequence[LockEntry],
                          options: Options) -> list[LockEntry] | None:
    """Lock entries with their provenance found now; None when any search failed, each failure reported."""
    checked = with_evidence(client, entries, options)
    for entry, outcome in zip(entries, checked, strict=True):
        if isinstance(outcome, PinguardError):
            print(f"pinguard: {entry.name}:{entry.tag}: provenance: {outcome}", file=options.stderr)
    return None if any(isinstance(o, PinguardError) for o in checked) else [
        o for o in checked if isinstance(o, LockEntry)]
