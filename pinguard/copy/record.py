"""The lock told where its images were copied: `copies`, written once a copy is done."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pinguard.clock import utc_now
from pinguard.copy.plan import ImagePlan
from pinguard.lock import lockfile
from pinguard.lock.exclusive import exclusive
from pinguard.lock.lockfile import Copy


def record_copies(path: Path, copied: Sequence[ImagePlan]) -> list[str]:
    """The copies recorded in the lock as it is now (read again: it may have changed meanwhile), for entries
    still locked at the digest copied. A copy already recorded keeps its time: the lock changes only for news.
    Returns what a killed writer left that was cleared (`exclusive`)."""
    with exclusive(path) as cleared:
        lock = lockfile.read(path)
        news = []
        for plan in copied:
            entry = lock.get(plan.entry.name, plan.entry.tag)
            if entry is not None and entry.digest == plan.entry.digest and all(
                    copy.to != plan.target for copy in entry.copies):
                news.append(replace(entry, copies=(*entry.copies, Copy(plan.target, utc_now()))))
        if news:
            lockfile.write(path, lock.with_entries(news))
    return cleared
