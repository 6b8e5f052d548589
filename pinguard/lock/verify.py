"""Is every locked digest still served, does its tag still point there, and do its bytes back the entry?

Online, and never from the cache: what counts is what the registry serves now. Each
tag is fetched again and its bytes hashed: when they hash to the locked digest, the
registry still serves that digest and the tag still points to it, for one request.
Otherwise the locked digest is fetched by digest and re-hashed to tell `moved` from
`missing` and `mismatch`; an entry locked at a digest its tag did not point to
(`tag_served = false`) is `unserved`, not `moved`, while the tag points elsewhere. Entries
are checked concurrently (each registry at its pace) and returned in the order given.
`verify` reports the verdicts; `update` moves the moved ones forward. An entry whose
provenance the lock records has it looked for again: a signature that no longer
verifies, or provenance that changed, is a finding.

The bytes fetched (by tag or by digest) are held against what the entry claims of them
(`pinguard.lock.claims`): its media type, size and platforms; each difference is a finding
naming the field. What each entry costs: one GET when its tag still points to the locked
digest, a second (by digest) otherwise; a single image's config too, from the content-addressed
cache when there (one blob GET otherwise); and, for an entry with a `frozen_tag`, one HEAD
asking where that tag points (none when the run already asked), plus the search for the frozen
tag that does serve the digest only where it points elsewhere. `held_to_bytes` is the one piece
`lock` (`kept_from_bytes`, from the cache) and `update` correct such entries with.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import partial
from pathlib import Path

from pinguard import errors
from pinguard.errors import DigestMismatch, NotFound, PinguardError
from pinguard.lock import lockfile
from pinguard.lock.claims import Claims, held_against
from pinguard.lock.lockfile import Lock, LockEntry, LockfileError
from pinguard.provenance.changes import lost
from pinguard.provenance.trust import Trust
from pinguard.reference import parse
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import ManifestBody
from pinguard.resolve.resolved import Resolved
from pinguard.resolve.resolver import Resolver
from pinguard.resolve.settings import OnlineSettings


class Status(StrEnum):
    OK = "ok"  # the digest is served and the tag still points to it
    MOVED = "moved"  # the digest is served, the tag points elsewhere now
    UNSERVED = "unserved"  # the digest is served, but the tag pointed elsewhere when it was locked and still does
    MISSING = "missing"  # the digest (or the tag) is no longer served
    MISMATCH = "mismatch"  # the registry served bytes that do not hash to the digest
    ERROR = "error"  # the registry could not be asked


@dataclass(frozen=True)
class Verdict:
    entry: LockEntry
    status: Status
    current: Resolved | None = None  # for MOVED, UNSERVED: where the tag points now, with what a lock entry keeps
    message: str | None = None
    error: PinguardError | None = None  # for ERROR: what went wrong
    provenance: tuple[str, ...] = ()  # what held of the recorded provenance and no longer does
    claims: Claims | None = None  # the entry held against the bytes of its digest, where they were served

    @property
    def contradicted(self) -> tuple[str, ...]:
        """Each field of the entry its bytes (or its frozen tag) contradict, a line naming it."""
        return self.claims.differences if self.claims is not None else ()

    @property
    def problems(self) -> tuple[str, ...]:
        """What `verify` reports below the verdict, each failing it: claims contradicted, provenance lost."""
        return (*self.contradicted, *self.provenance)

    @property
    def as_served(self) -> LockEntry:
        """The entry with what its bytes contradict corrected: what `update` carries forward and explains from."""
        return self.claims.entry if self.claims is not None else self.entry

    @property
    def current_digest(self) -> str | None:
        if self.status is Status.OK:
            return self.entry.digest
        return self.current.digest if self.current else None

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.entry.name, "tag": self.entry.tag, "digest": self.entry.digest,
            "status": self.status.value, "current_digest": self.current_digest, "message": self.message,
            "provenance": list(self.provenance), "contradicted": list(self.contradicted),
        }


def read_lock(path: Path) -> Lock:
    """The lock at `path`, which must exist: checking no lockfile (a wrong path, say) is no success."""
    if not path.exists():
        raise LockfileError(f"{path}: not found; run `pinguard lock` first")
    return lockfile.read(path)


def verify_with_progress(entries: Sequence[LockEntry], client: RegistryClient,
                         settings: OnlineSettings) -> list[Verdict]:
    """`verify_entries`, with progress on a terminal while registries are waited on."""
    registries = [parse(entry.name).registry for entry in entries]
    with settings.progress_line(registries, client.held_to, "entries") as done:
        return verify_entries(entries, client, settings,
                              None if done is None else lambda entry: done(parse(entry.name).registry))


def verify_entries(entries: Sequence[LockEntry], client: RegistryClient, settings: OnlineSettings,
                   progress: Callable[[LockEntry], None] | None = None) -> list[Verdict]:
    """A verdict for each entry, in the order of `entries`; checked concurrently, faults returned as ERROR."""
    resolver = Resolver(client, settings.platforms, settings.tag_rules)
    client.expect((reference.registry, reference.repository) for reference in map(parse, (e.name for e in entries)))
    with ThreadPoolExecutor(max_workers=max(1, client.settings.workers)) as pool:
        futures = [pool.submit(_check_or_error, entry, client, resolver) for entry in entries]
        if progress is not None:  # told from this thread, so the display is written by one thread only
            for future in as_completed(futures):
                progress(future.result().entry)
    return _provenance_rechecked([future.result() for future in futures], client, settings.trust)


def _provenance_rechecked(verdicts: list[Verdict], client: RegistryClient, trust: Trust) -> list[Verdict]:
    """Verdicts on digests still served whose lock entry records provenance, with what no longer holds."""
    recorded = [i for i, v in enumerate(verdicts) if v.status is Status.OK and v.entry.evidence is not None]
    if not recorded:
        return verdicts
    from pinguard.resolve.online import with_evidence

    now = with_evidence(client, [verdicts[i].as_served for i in recorded], trust)  # its platforms as the bytes say
    checked = list(verdicts)
    for i, outcome in zip(recorded, now, strict=True):
        before = verdicts[i].entry.evidence
        assert before is not None
        if isinstance(outcome, PinguardError):
            checked[i] = Verdict(verdicts[i].entry, Status.ERROR, message=f"provenance: {outcome}", error=outcome)
        elif outcome.evidence is not None:
            checked[i] = replace(verdicts[i], provenance=tuple(lost(before, outcome.evidence)))
    return checked


def deadline_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """One line per registry whose requests the run's deadline cut short, with how many entries were left."""
    return errors.deadline_lines((verdict.error for verdict in verdicts), len(verdicts), "entries left unverified")


def _check_or_error(entry: LockEntry, client: RegistryClient, resolver: Resolver) -> Verdict:
    try:
        return _check(entry, client, resolver)
    except PinguardError as exc:
        return Verdict(entry, Status.ERROR, message=str(exc), error=exc)


def _check(entry: LockEntry, client: RegistryClient, resolver: Resolver) -> Verdict:
    verdict, body = _served(entry, client, resolver)
    if body is None:
        return verdict
    return replace(verdict, claims=held_to_bytes(entry, body, client, resolver, fresh=True))


def _served(entry: LockEntry, client: RegistryClient, resolver: Resolver) -> tuple[Verdict, ManifestBody | None]:
    """The verdict on the digest and its tag, with the bytes of the digest where they were served."""
    reference = parse(f"{entry.name}:{entry.tag}")
    registry, repository = reference.registry, reference.repository
    try:
        body = client.fresh_manifest(registry, repository, entry.tag)  # hashed from the bytes served
    except NotFound as exc:
        tag_missing: NotFound | None = exc
    else:
        if body.digest == entry.digest:
            return Verdict(entry, Status.OK), body
        tag_missing = None
    try:
        body = client.fresh_manifest(registry, repository, entry.digest)  # re-hashed against the digest asked for
    except NotFound as exc:
        return Verdict(entry, Status.MISSING, message=str(exc)), None
    except DigestMismatch as exc:
        return Verdict(entry, Status.MISMATCH, message=str(exc)), None
    if tag_missing is not None:
        message = f"the digest is still served, but not the tag: {tag_missing}"
        return Verdict(entry, Status.MISSING, message=message), body
    # Resolving anew names the frozen tag behind the new digest and gathers what `update` locks;
    # what the tag points to was learnt above, so that costs no request again.
    current = resolver.resolve(reference)
    if current.digest == entry.digest:  # moved back since the HEAD
        return Verdict(entry, Status.OK), body
    frozen = f", the same digest as {current.frozen_tag}" if current.frozen_tag else ""
    if not entry.tag_served:  # it never pointed here: a tag that moves on is no explanation
        never = f"{entry.tag} points to {current.digest}{frozen}, and did not point to the locked digest when it " \
                "was locked either"
        return Verdict(entry, Status.UNSERVED, current, never), body
    return Verdict(entry, Status.MOVED, current, f"{entry.tag} now points to {current.digest}{frozen}"), body


def held_to_bytes(entry: LockEntry, body: ManifestBody, client: RegistryClient, resolver: Resolver, *,
                  fresh: bool) -> Claims:
    """`entry` held against `body`, the bytes of its digest, and its `frozen_tag` against where that tag points.

    Fresh, the frozen tag is asked where it points (one HEAD a run); otherwise a frozen tag the cache
    remembers serving the digest costs no request. Where it points elsewhere, the frozen tag that does
    serve the digest is looked for.
    """
    reference = parse(f"{entry.name}:{entry.tag}")
    claims = held_against(entry, body, partial(resolver.image_platform, reference))
    frozen = entry.frozen_tag
    if frozen is None or (not fresh and client.cache.frozen_tag(entry.name, entry.tag, entry.digest) == frozen):
        return claims
    try:
        points_to: str | None = client.digest_for_tag(reference.registry, reference.repository, frozen)
    except NotFound:
        points_to = None
    if points_to == entry.digest:
        return claims
    return claims.with_frozen_tag(points_to, resolver.frozen_alias(reference, entry.tag, entry.digest))


def kept_from_bytes(entries: Sequence[LockEntry], client: RegistryClient,
                    settings: OnlineSettings) -> list[Claims | PinguardError]:
    """Each entry held against its bytes, read from the content-addressed cache when there (fetched by digest
    otherwise), concurrently; a failure is returned in its place. What `lock` keeps."""
    resolver = Resolver(client, settings.platforms, settings.tag_rules)
    client.expect((reference.registry, reference.repository) for reference in map(parse, (e.name for e in entries)))

    def held(entry: LockEntry) -> Claims | PinguardError:
        reference = parse(entry.name)
        try:
            body = client.cached_manifest(reference.registry, reference.repository, entry.digest)
            return held_to_bytes(entry, body, client, resolver, fresh=False)
        except PinguardError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=max(1, client.settings.workers)) as pool:
        return list(pool.map(held, entries))
