"""unused-lock-entry: a lockfile entry that no checked file references.

Usually a leftover from an image no longer used; `pinguard lock` drops it.
Only meaningful when `check` sees the whole tree the lockfile covers.

PASS: every `[[image]]` in pinguard.lock is referenced
FAIL: `nginx:1.24` locked, no file mentions it
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

from pinguard.findings import Problem
from pinguard.lock.lockfile import header_lines, toml_string
from pinguard.policy.rules.common import Conf, Context
from pinguard.reference import locked_key
from pinguard.sources.base import Found

ID = "unused-lock-entry"
TYPE: Final = "lock"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "warning"}


def check(conf: Conf, found: Sequence[Found], context: Context, lock_text: str) -> Iterator[Problem]:
    used = context.lock.referenced(locked_key(f.reference) for f in found if f.reference is not None)
    unused = [entry for entry in context.lock if entry.key not in used.entries]
    lines = header_lines(lock_text) if unused else {}  # read once, however many entries are unused
    for entry in unused:
        # The line of the entry's `[[image]]` header, found through its name and tag.
        yield Problem(context.lockfile, lines.get((toml_string(entry.name), toml_string(entry.tag)), 1), 1,
                      f"{entry.name}:{entry.tag} is locked but no checked file references it: "
                      "run `pinguard lock` to drop it", f"{entry.name}:{entry.tag}")
