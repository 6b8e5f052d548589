"""action-mismatch: a `uses:` pinned to a commit pins the one pinguard.lock holds for it.

A pinned `uses:` finds its entry by its version comment (`@<commit> # v6.0.1`: the entry of
that ref, or whose frozen tag it is), else by its commit. The commit written must be the
entry's: a comment that names a release while the commit is another one is how a commit
only a fork holds slips in. An entry locked at a commit no tag or branch of the repository
pointed at is reported too. `pinguard pin` writes the locked commit; a pinned `uses:` the
lock holds nothing for is reported, since nothing vouches for its commit.

PASS: `uses: actions/checkout@<commit> # v6.0.1`, `v6.0.1`'s commit in pinguard.lock
FAIL: `uses: actions/checkout@<another commit> # v6.0.1`
FAIL: `uses: actions/checkout@<commit>` and no entry of actions/checkout at that commit
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at
from pinguard.sources.base import ActionUse

ID = "action-mismatch"
TYPE: Final = "action"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, use: ActionUse, context: Context) -> Iterator[Problem]:
    action = use.action
    if action is None or not action.pinned:
        return
    entry = context.lock.actions.entry_for(use)
    if entry is None:
        yield at(use, f"`{use.value}`: {context.lockfile} holds no entry of {action.repository} at this commit: "
                      "nothing checked that the repository published it; run `pinguard lock`")
    elif entry.commit != action.ref:
        yield at(use, f"`{use.value}` is not the commit {context.lockfile} holds for {entry.repository}@"
                      f"{entry.ref}: {entry.commit}; `pinguard pin` writes it")
    elif not entry.ref_found:
        yield at(use, f"`{use.value}`: no tag or branch of {entry.repository} pointed at this commit when it was "
                      "locked: it may exist only in a fork; pin a release of the repository itself")
