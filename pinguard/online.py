"""What online work shares: one registry client for the run, and resolving with progress.

Importing this module loads the network stack; offline commands never do (`pinguard.locking`
imports it only when something must be resolved).
"""
from __future__ import annotations

from collections.abc import Sequence

from pinguard.errors import PinguardError
from pinguard.options import Options
from pinguard.progress import Progress
from pinguard.reference import Reference
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.resolve import Resolved, Resolver


def open_client(options: Options) -> RegistryClient:
    """A client for this run: one pacer per registry, one deadline, the cache under options.cache_dir."""
    return RegistryClient(options.registry, RegistryCache(options.cache_dir))


def resolve_references(references: Sequence[Reference],
                       options: Options) -> dict[Reference, Resolved | PinguardError]:
    """Each reference resolved (or its error), with progress on a terminal while registries are waited on."""
    with open_client(options) as client:
        progress = Progress.on_terminal(options.stderr, options.quiet, (r.registry for r in dict.fromkeys(references)),
                                        client.held_to)
        try:
            return Resolver(client, options.platforms, options.tag_rules).resolve_all(
                references, None if progress is None else lambda reference: progress.done(reference.registry))
        finally:
            if progress is not None:
                progress.clear()
