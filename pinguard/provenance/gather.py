"""One locked image's provenance: discovered, read, verified, and recorded as `Evidence`.

Importing this module loads `cryptography` (and, lazily, `sigstore`): only commands asked
for provenance do (`lock --provenance`, `resolve --provenance`, `verify` and `update` on
entries that hold some).
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from pinguard.clock import utc_now
from pinguard.errors import PinguardError
from pinguard.provenance import bundles, discovery, signatures, statements
from pinguard.provenance.evidence import SIGSTORE_BUNDLE, Build, Evidence, Sbom, Signature
from pinguard.provenance.trust import Trust
from pinguard.reference import parse

if TYPE_CHECKING:
    from pinguard.registry.client import RegistryClient

_log = logging.getLogger("pinguard")


def gather(client: RegistryClient, name: str, digest: str, platforms: Mapping[str, str], trust: Trust) -> Evidence:
    """What refers to the image `name@digest` and its platform manifests, read and verified now."""
    reference = parse(name)
    found = discovery.discover(client, reference.registry, reference.repository, digest, platforms.values())
    builds: dict[tuple[str, str], Build] = {}
    sboms: dict[tuple[str, str | None], Sbom] = {}
    verified: dict[Signature, None] = {}  # a signature found twice for one subject is one
    notes = list(found.notes)
    for artifact in found.artifacts:
        if artifact.artifact_type == SIGSTORE_BUNDLE:
            verified[bundles.verify_bundle(artifact, artifact.subject, trust)] = None
            continue
        verified.update(dict.fromkeys(signatures.verify(artifact, artifact.subject, trust)))
        read = statements.read(artifact, artifact.subject, trust)
        builds.update(((build.statement_digest, build.subject), build) for build in read.builds)
        sboms.update(((sbom.digest, sbom.subject), sbom) for sbom in read.sboms)
        notes.extend(read.problems)
    for note in notes:
        _log.debug("%s@%s: %s", name, digest, note)
    return Evidence(utc_now(), tuple(builds.values()), tuple(verified), tuple(sboms.values()), found.unread)


def gather_all(client: RegistryClient, images: list[tuple[str, str, Mapping[str, str]]],
               trust: Trust) -> list[Evidence | PinguardError]:
    """`gather` for each (name, digest, platforms), concurrently (each registry at its pace), in order."""
    def one(image: tuple[str, str, Mapping[str, str]]) -> Evidence | PinguardError:
        try:
            return gather(client, *image, trust)
        except PinguardError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=max(1, client.settings.workers)) as pool:
        return list(pool.map(one, images))
