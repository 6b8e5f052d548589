"""What online work shares: one registry client for the run, resolving with progress, and provenance looked up.

Importing this module loads the network stack; offline commands never do (`pinguard.lock.sync`
imports it only when something must be resolved).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import Field, replace
from typing import Any, ClassVar, Protocol, TypeVar

from pinguard.errors import PinguardError
from pinguard.provenance.trust import Trust
from pinguard.reference import Reference
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.resolve.resolved import Resolved
from pinguard.resolve.resolver import Resolver
from pinguard.resolve.settings import OnlineSettings


def open_client(settings: OnlineSettings) -> RegistryClient:
    """A client for this run: one pacer per registry, one deadline, the cache under `settings.cache_dir`."""
    return RegistryClient(settings.registry, RegistryCache(settings.cache_dir))


def resolve_references(references: Sequence[Reference], settings: OnlineSettings,
                       client: RegistryClient | None = None) -> dict[Reference, Resolved | PinguardError]:
    """Each reference resolved (or its error), with progress on a terminal while registries are waited on.

    With `settings.provenance`, each resolved image also carries what was found of its provenance.
    `client` is the run's, when it has one open (so that its pacers, tokens and deadline hold for the
    whole run); else one is opened for this call.
    """
    if client is None:
        with open_client(settings) as opened:
            return resolve_references(references, settings, opened)
    with settings.progress_line((r.registry for r in dict.fromkeys(references)), client.held_to,
                                "references") as done:
        outcomes = Resolver(client, settings.platforms, settings.tag_rules).resolve_all(
            references, None if done is None else lambda reference: done(reference.registry))
    if settings.provenance:
        resolved = {ref: outcome for ref, outcome in outcomes.items() if isinstance(outcome, Resolved)}
        looked = with_evidence(client, list(resolved.values()), settings.trust)
        outcomes.update(zip(resolved, looked, strict=True))
    return outcomes


class _Image(Protocol):
    """What provenance is gathered for: a resolved reference, or an entry of the lock (a dataclass either way)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def name(self) -> str: ...

    @property
    def digest(self) -> str: ...

    @property
    def platforms(self) -> Mapping[str, str]: ...


_Gathered = TypeVar("_Gathered", bound=_Image)


def with_evidence(client: RegistryClient, images: Sequence[_Gathered], trust: Trust) -> list[_Gathered | PinguardError]:
    """Each image (resolved, or a lock entry) with its provenance found now, or the error that stopped the search."""
    from pinguard.provenance.gather import gather_all  # cryptography: only when provenance is asked for

    found = gather_all(client, [(image.name, image.digest, image.platforms) for image in images], trust)
    return [evidence if isinstance(evidence, PinguardError) else replace(image, evidence=evidence)
            for image, evidence in zip(images, found, strict=True)]
