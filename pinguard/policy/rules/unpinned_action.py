"""unpinned-action: every GitHub Actions `uses:` of another repository names a commit.

A tag (`actions/checkout@v6`) or a branch is a promise anyone who can push to the action's
repository may break, its owner or whoever takes over the account; a commit is not.
`pinguard lock` resolves the ref, `pinguard pin` writes `@<commit> # <frozen tag>`. Local
actions (`./…`) run at the repository's own commit and `docker://` images are judged as
images. `allow` lists repositories (globs on the lower-cased `owner/repo`, e.g. `actions/*`)
whose refs may stay unpinned.

PASS: `uses: actions/checkout@de0fac2e4500dabe0009e67214ff5f5447ce83dd # v6.0.2`
PASS: `uses: ./.github/actions/build`
FAIL: `uses: actions/checkout@v6`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at, listed
from pinguard.sources.base import ActionUse

ID = "unpinned-action"
TYPE: Final = "action"
CONF: dict[str, object] = {"allow": [str]}
DEFAULT: dict[str, object] = {"level": "error", "allow": []}


def check(conf: Conf, use: ActionUse, context: Context) -> Iterator[Problem]:
    action = use.action
    if action is None or action.pinned or listed(action.repository, conf.get("allow", [])):
        return
    entry = context.lock.actions.entry_for(use)
    how = (f"`pinguard pin` writes `@{entry.commit} # {entry.version}`" if entry is not None
           else "run `pinguard lock`, then `pinguard pin`")
    yield at(use, f"`{use.value}` names no commit: whoever can push to {action.repository} changes what runs; {how}")
