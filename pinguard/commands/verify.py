"""`pinguard verify`: is every locked digest still served, and does its tag still point there?

Online, and never from the cache: what counts is what the registry serves now. Each
locked digest is fetched again and re-hashed, and each tag is asked where it points.
Entries are checked concurrently and reported in lockfile order.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TextIO

from pinguard import lockfile
from pinguard.errors import DigestMismatch, NotFound, PinguardError
from pinguard.lockfile import Lock, LockEntry, LockfileError
from pinguard.options import Options
from pinguard.reference import parse
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import Platform
from pinguard.resolve import Resolved, Resolver

Progress = Callable[[int, LockEntry], None]  # told (entries done, the entry just done)


class Status(StrEnum):
    OK = "ok"  # the digest is served and the tag still points to it
    MOVED = "moved"  # the digest is served, the tag points elsewhere now
    MISSING = "missing"  # the digest (or the tag) is no longer served
    MISMATCH = "mismatch"  # the registry served bytes that do not hash to the digest
    ERROR = "error"  # the registry could not be asked


@dataclass(frozen=True)
class Verdict:
    entry: LockEntry
    status: Status
    current: Resolved | None = None  # for MOVED: where the tag points now, with the evidence a lock entry keeps
    message: str | None = None

    @property
    def current_digest(self) -> str | None:
        if self.status is Status.OK:
            return self.entry.digest
        return self.current.digest if self.current else None

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.entry.name, "tag": self.entry.tag, "digest": self.entry.digest,
            "status": self.status.value, "current_digest": self.current_digest, "message": self.message,
        }


def verify(options: Options, *, fmt: str = "text", fail_on_moved: bool = False) -> int:
    entries = list(read_lock(options.lockfile))
    progress = _TerminalProgress(options.stderr, len(entries)) if options.stderr.isatty() else None
    try:
        with RegistryClient(options.registry, RegistryCache(options.cache_dir)) as client:
            verdicts = check(entries, client, options.platforms, progress)
    finally:
        if progress is not None:
            progress.clear()
    counts = {status.value: sum(v.status is status for v in verdicts) for status in Status}
    if fmt == "json":
        json.dump({"entries": [v.to_json() for v in verdicts], "summary": {"total": len(verdicts), **counts}},
                  options.stdout, indent=2)
        options.stdout.write("\n")
    else:
        for verdict in verdicts:
            if verdict.status is not Status.OK or not options.quiet:
                print(_text(verdict), file=options.stdout)
        if not options.quiet:
            counted = ", ".join(f"{count} {status}" for status, count in counts.items() if count)
            entries_text = f"{len(verdicts)} entr{'y' if len(verdicts) == 1 else 'ies'}"
            print(f"{options.lockfile}: {entries_text}" + (f": {counted}" if counted else ""), file=options.stdout)
    if counts[Status.ERROR]:
        return 2
    failed = counts[Status.MISSING] or counts[Status.MISMATCH] or (fail_on_moved and counts[Status.MOVED])
    return 1 if failed else 0


def read_lock(path: Path) -> Lock:
    """The lock at `path`, which must exist: checking no lockfile (a wrong path, say) is no success."""
    if not path.exists():
        raise LockfileError(f"{path}: not found; run `pinguard lock` first")
    return lockfile.read(path)


def check(entries: Sequence[LockEntry], client: RegistryClient, platforms: Sequence[Platform],
          progress: Progress | None = None) -> list[Verdict]:
    """A verdict for each entry, in the order of `entries`; checked concurrently, faults returned as ERROR."""
    resolver = Resolver(client, platforms)
    with ThreadPoolExecutor(max_workers=max(1, client.settings.workers)) as pool:
        futures = [pool.submit(_check_or_error, entry, client, resolver) for entry in entries]
        if progress is not None:  # told from this thread, so the display is written by one thread only
            for done, future in enumerate(as_completed(futures), 1):
                progress(done, future.result().entry)
    return [future.result() for future in futures]


def _check_or_error(entry: LockEntry, client: RegistryClient, resolver: Resolver) -> Verdict:
    try:
        return _check(entry, client, resolver)
    except PinguardError as exc:
        return Verdict(entry, Status.ERROR, message=str(exc))


def _check(entry: LockEntry, client: RegistryClient, resolver: Resolver) -> Verdict:
    reference = parse(f"{entry.name}:{entry.tag}")
    registry, repository = reference.registry, reference.repository
    try:
        client.fetch_manifest(registry, repository, entry.digest)  # re-hashed against the digest asked for
    except NotFound as exc:
        return Verdict(entry, Status.MISSING, message=str(exc))
    except DigestMismatch as exc:
        return Verdict(entry, Status.MISMATCH, message=str(exc))
    try:
        head = client.head_manifest(registry, repository, entry.tag)
    except NotFound as exc:
        return Verdict(entry, Status.MISSING, message=f"the digest is still served, but not the tag: {exc}")
    if (head.digest or client.get_manifest(registry, repository, entry.tag).digest) == entry.digest:
        return Verdict(entry, Status.OK)
    # Resolving anew names the frozen tag behind the new digest and gathers what `update` locks.
    current = resolver.resolve(reference)
    if current.digest == entry.digest:  # moved back since the HEAD
        return Verdict(entry, Status.OK)
    frozen = f", the same digest as {current.frozen_tag}" if current.frozen_tag else ""
    return Verdict(entry, Status.MOVED, current, f"{entry.tag} now points to {current.digest}{frozen}")


def _text(verdict: Verdict) -> str:
    entry = verdict.entry
    line = f"{verdict.status.value:<8} {entry.name}:{entry.tag} {entry.digest}"
    if verdict.status is Status.MOVED and verdict.current is not None:
        frozen = verdict.current.frozen_tag
        return f"{line} -> {verdict.current.digest}" + (f" ({frozen})" if frozen else "")
    return f"{line}: {verdict.message}" if verdict.message else line


class _TerminalProgress:
    """`[12/40] verifying name:tag` on one terminal line, redrawn in place and cleared at the end."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self._stream = stream
        self._total = total
        try:  # the width of this stream's terminal: stdout may well be a file
            columns = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError):  # no descriptor (io.UnsupportedOperation is both)
            columns = 80
        self._width = columns - 1  # a line that wraps could not be redrawn in place

    def __call__(self, done: int, entry: LockEntry) -> None:
        line = f"[{done}/{self._total}] verifying {entry.name}:{entry.tag}"
        self._stream.write("\r\x1b[K" + line[:self._width])
        self._stream.flush()

    def clear(self) -> None:
        self._stream.write("\r\x1b[K")
        self._stream.flush()
