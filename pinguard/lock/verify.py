"""Is every locked digest still served, and does its tag still point there?

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
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from pinguard import errors
from pinguard.errors import DigestMismatch, NotFound, PinguardError
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry, LockfileError
from pinguard.provenance.changes import lost
from pinguard.provenance.trust import Trust
from pinguard.reference import parse
from pinguard.registry.client import RegistryClient
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

    @property
    def current_digest(self) -> str | None:
        if self.status is Status.OK:
            return self.entry.digest
        return self.current.digest if self.current else None

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.entry.name, "tag": self.entry.tag, "digest": self.entry.digest,
            "status": self.status.value, "current_digest": self.current_digest, "message": self.message,
            "provenance": list(self.provenance),
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

    now = with_evidence(client, [verdicts[i].entry for i in recorded], trust)
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
    reference = parse(f"{entry.name}:{entry.tag}")
    registry, repository = reference.registry, reference.repository
    try:
        now = client.fresh_manifest(registry, repository, entry.tag).digest  # hashed from the bytes served
    except NotFound as exc:
        tag_missing: NotFound | None = exc
    else:
        if now == entry.digest:
            return Verdict(entry, Status.OK)
        tag_missing = None
    try:
        client.fresh_manifest(registry, repository, entry.digest)  # re-hashed against the digest asked for
    except NotFound as exc:
        return Verdict(entry, Status.MISSING, message=str(exc))
    except DigestMismatch as exc:
        return Verdict(entry, Status.MISMATCH, message=str(exc))
    if tag_missing is not None:
        return Verdict(entry, Status.MISSING, message=f"the digest is still served, but not the tag: {tag_missing}")
    # Resolving anew names the frozen tag behind the new digest and gathers what `update` locks;
    # what the tag points to was learnt above, so that costs no request again.
    current = resolver.resolve(reference)
    if current.digest == entry.digest:  # moved back since the HEAD
        return Verdict(entry, Status.OK)
    frozen = f", the same digest as {current.frozen_tag}" if current.frozen_tag else ""
    if not entry.tag_served:  # it never pointed here: a tag that moves on is no explanation
        return Verdict(entry, Status.UNSERVED, current, f"{entry.tag} points to {current.digest}{frozen}, and did not "
                                                        "point to the locked digest when it was locked either")
    return Verdict(entry, Status.MOVED, current, f"{entry.tag} now points to {current.digest}{frozen}")
