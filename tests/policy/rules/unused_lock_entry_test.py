"""unused-lock-entry: a lock entry no file references, placed at its line of the lockfile."""
from __future__ import annotations

from pathlib import Path

from pinguard.lock.lockfile import Lock, LockEntry, dumps
from pinguard.policy.rules import unused_lock_entry
from pinguard.policy.rules.common import Context
from pinguard.reference import parse
from tests.counting import CountingText
from tests.policy.helpers import OTHER, check_rule, locked, pod

MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def test_unused_lock_entry_points_at_the_lockfile(folder: Path) -> None:
    lock = locked(folder, "nginx:1.25", "redis:7.2")
    found = check_rule(folder, "unused-lock-entry", {"pod.yaml": pod("nginx:1.25")}, lock=lock)
    text = (folder / "pinguard.lock").read_text().splitlines()
    assert [(f.file, f.reference) for f in found] == [("pinguard.lock", "docker.io/library/redis:7.2")]
    assert text[found[0].line - 1] == "[[image]]" and 'docker.io/library/redis' in text[found[0].line]
    assert parse("redis:7.2").name in found[0].message


def test_unused_lock_entries_are_placed_in_one_pass_over_the_lockfile() -> None:
    examined = []
    for count in (300, 1200):
        lock = Lock().with_entries(LockEntry(
            name=f"docker.io/library/app{n}", tag="1.0", digest=OTHER, media_type=MANIFEST, size=0, tag_kind="other",
            frozen_tag=None, resolved_at="2026-11-30T00:00:00Z", platforms={}) for n in range(count))
        text = CountingText(dumps(lock))
        problems = list(unused_lock_entry.check({}, [], Context(lock, "pinguard.lock"), text))
        lines = text.splitlines()
        assert len(problems) == count
        for problem in problems:
            assert lines[problem.line - 1] == "[[image]]"
            assert lines[problem.line] == f'name = "{str(problem.reference).partition(":")[0]}"'
        examined.append(text.examined)
    assert examined[1] <= 4.5 * examined[0]
