"""unpinned-action: a `uses:` of another repository at a tag or branch, as a truth table."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.rules.actions_helpers import COMMIT, entry, findings

RULE = "unpinned-action"
ALLOW_ACTIONS = "extends: default\nrules:\n  unpinned-action: {level: error, allow: ['actions/*']}\n"


@pytest.mark.parametrize(("uses", "locked", "policy", "expected"), [
    ("actions/checkout@v6", [], "", "names no commit: whoever can push to actions/checkout changes what runs; run "
                                    "`pinguard lock`, then `pinguard pin`"),
    ("actions/checkout@v6", [entry("actions/checkout", "v6", frozen="v6.0.1")], "",
     f"`pinguard pin` writes `@{COMMIT} # v6.0.1`"),
    ("acme/deploy/.github/workflows/release.yml@main", [], "", "whoever can push to acme/deploy"),  # reusable
    (f"actions/checkout@{COMMIT} # v6.0.1", [], "", None),
    ("./.github/actions/build", [], "", None),  # the repository's own, at the commit that runs
    ("docker://alpine:3.20", [], "", None),  # an image: the image rules judge it
    ("actions/checkout@v6", [], ALLOW_ACTIONS, None),
    ("Actions/Checkout@v6", [], ALLOW_ACTIONS, None),  # GitHub compares owners without case
    ("acme/deploy@v1", [], ALLOW_ACTIONS, "acme/deploy"),  # allowing one owner allows no other
])
def test_rule(tmp_path: Path, uses: str, locked: list, policy: str, expected: str | None) -> None:
    found = findings(tmp_path, uses, locked, RULE, policy)
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and expected in found[0]
