"""action-mismatch: a `uses:` pinned to a commit that is not the one the lock holds for it, as a truth table."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.rules.actions_helpers import COMMIT, OTHER, entry, findings

RULE = "action-mismatch"


@pytest.mark.parametrize(("uses", "locked", "expected"), [
    # the entry of the comment's ref, or whose frozen tag the comment names, at the commit written
    (f"actions/checkout@{COMMIT} # v6.0.1", [entry("actions/checkout", "v6", frozen="v6.0.1")], None),
    (f"actions/checkout@{COMMIT} # v6.0.1", [entry("actions/checkout", "v6.0.1")], None),
    (f"actions/checkout@{COMMIT}", [entry("actions/checkout", "v6", frozen="v6.0.1")], None),  # by its commit
    # another commit than the entry's
    (f"actions/checkout@{OTHER} # v6.0.1", [entry("actions/checkout", "v6", frozen="v6.0.1")],
     f"holds for actions/checkout@v6: {COMMIT}"),
    (f"actions/checkout@{OTHER}", [entry("actions/checkout", "v6")],
     "holds no entry of actions/checkout at this commit"),
    # a commit no ref named when it was locked
    (f"actions/checkout@{COMMIT}", [entry("actions/checkout", COMMIT, ref_found=False)], "may exist only in a fork"),
    ("actions/checkout@v6", [], None),  # a tag is unpinned-action's
])
def test_rule(tmp_path: Path, uses: str, locked: list, expected: str | None) -> None:
    found = findings(tmp_path, uses, locked, RULE)
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and expected in found[0]
