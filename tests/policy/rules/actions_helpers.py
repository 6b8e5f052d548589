"""What the tests of the action rules share: a workflow and a lock written, `check` run, the rule's findings."""
from __future__ import annotations

import io
import json
from pathlib import Path

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.actions import ActionEntry
from pinguard.lock.lockfile import Lock

COMMIT = "a" * 40
OTHER = "b" * 40


def entry(repository: str, ref: str, commit: str = COMMIT, *, frozen: str | None = None,
          ref_found: bool = True) -> ActionEntry:
    kind = "commit" if ref == commit else "frozen" if ref.count(".") == 2 else "moving"
    return ActionEntry(repository, ref, commit, kind, frozen, "2026-12-02T00:00:00Z", ref_found)


def findings(folder: Path, uses: str, entries: list[ActionEntry], rule: str, policy: str = "") -> list[str]:
    """The messages of `rule` when `check` reads a workflow of one step using `uses`, the lock holding `entries`."""
    workflow = folder / ".github" / "workflows" / "ci.yml"
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_text(f"on: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: {uses}\n")
    lockfile.write(folder / "pinguard.lock", Lock().with_actions(entries))
    flags = []
    if policy:
        (folder / "policy.yaml").write_text(policy)
        flags = ["--policy", str(folder / "policy.yaml")]
    out = io.StringIO()
    main(["check", "--format", "json", "--lockfile", str(folder / "pinguard.lock"), *flags, str(workflow)],
         env={"HOME": str(folder)}, stdout=out, stderr=io.StringIO())
    return [item["message"] for item in json.loads(out.getvalue())["findings"] if item["rule"] == rule]
