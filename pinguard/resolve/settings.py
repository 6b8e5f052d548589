"""What the online work is asked to do: how to reach registries, what to resolve, what to show (records, no network).

The command line builds one for the commands that reach registries; `resolve.online`, `lock.sync`,
`lock.verify` and `lock.update` take it, and importing it costs none of the network stack.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from pinguard.git.remote import GitSettings
from pinguard.progress import Describe, Progress
from pinguard.provenance.trust import Trust
from pinguard.registry.manifest import Platform
from pinguard.registry.settings import RegistrySettings
from pinguard.resolve.tags import TagRules


@dataclass(frozen=True)
class OnlineSettings:
    registry: RegistrySettings
    platforms: tuple[Platform, ...]  # the platforms every image must offer
    cache_dir: Path | None = None  # where registry answers are kept between runs; None: this run only
    tag_rules: TagRules = field(default_factory=TagRules)  # from the policy: which tags move
    trust: Trust = field(default_factory=Trust)  # from the policy: what signatures are verified against
    provenance: bool = False  # also look for provenance, signatures and SBOMs of what is resolved
    progress: TextIO | None = None  # where progress is drawn while registries are waited on, if a terminal
    git: GitSettings = field(default_factory=GitSettings)  # how the refs of the actions workflows use are listed

    @contextmanager
    def progress_line(self, registries: Iterable[str], describe: Describe,
                      noun: str) -> Iterator[Callable[[str], None] | None]:
        """`done(registry)`, told as each piece of this much work ends, drawn on `progress` when it is a terminal
        and cleared at the end; None when nothing is drawn."""
        progress = None if self.progress is None else Progress.on_terminal(self.progress, False, registries,
                                                                          describe, noun)
        try:
            yield None if progress is None else progress.done
        finally:
            if progress is not None:
                progress.clear()
