"""Run one rule over a manifest through the real policy machinery, yamllint style."""
from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from pinguard.findings import Finding
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock
from pinguard.policy.catalog import RULES
from pinguard.policy.lint import findings
from pinguard.policy.load import load
from pinguard.policy.model import Policy
from pinguard.policy.rules.common import Context
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for, locked_test_digest


def check_rule(folder: Path, rule: str, files: dict[str, str], conf: dict[str, Any] | None = None,
               lock: Lock | None = None, extra: dict[str, Any] | None = None) -> list[Finding]:
    """The findings of `rule` alone (every other rule off) over `files`, written into `folder`."""
    for name, text in files.items():
        (folder / name).write_text(text)
    rules: dict[str, Any] = {other: "off" for other in RULES}
    rules[rule] = {"level": "error", **(conf or {})}
    policy_file = folder / ".policy.yaml"
    policy_file.write_text(yaml.safe_dump({"rules": rules, **(extra or {})}))
    policy = load([policy_file])
    lock = lock or Lock()
    lockfile.write(folder / "pinguard.lock", lock)
    lock_text = (folder / "pinguard.lock").read_text()
    result = scan_paths(sorted(files))
    assert result.errors == []
    return findings(policy, result.files, Context(lock, "pinguard.lock", policy.tag_rules), lock_text)


def places(found: list[Finding]) -> list[tuple[str, int, int]]:
    return [(f.file, f.line, f.column) for f in found]


def assert_found(found: list[Finding], expected: list[tuple[int, int, str]], rule: str) -> None:
    """The findings are at these (line, column)s, in order, each message holding its text."""
    assert [(f.line, f.column) for f in found] == [(line, column) for line, column, _ in expected]
    for finding, (_, _, message) in zip(found, expected, strict=True):
        assert message in finding.message and finding.rule == rule


def files_flagged(rule: ModuleType, folder: Path) -> set[str]:
    """The files under `folder` (the current folder) that `rule` alone, at level error, reports."""
    policy = Policy(rules={rule.ID: {**rule.DEFAULT, "level": "error"}})
    return {f.file for f in findings(policy, scan_paths([str(folder)]).files, Context(Lock(), "pinguard.lock"), "")}


# The rules that look at one reference at a time, each a truth table: a pod of one image in, findings out.
DIGEST = locked_test_digest("docker.io/library/nginx", "1.25")
OTHER = "sha256:" + "f" * 64


def pod(image: str) -> str:
    return f"kind: Pod\nspec:\n  containers:\n  - name: a\n    image: {image}\n"


def locked(folder: Path, *images: str) -> Any:
    (folder / "lockme.yaml").write_text("".join(f"---\n{pod(i)}" for i in images))
    lock = lock_for(scan_paths(["lockme.yaml"]).found)
    (folder / "lockme.yaml").unlink()
    return lock


def assert_reference_rule(folder: Path, rule: str, image: str, conf: dict[str, Any], lock_images: list[str],
                          expected: str | None) -> None:
    """`rule` alone over a pod of `image`: no finding, or one at the image holding `expected`."""
    found = check_rule(folder, rule, {"pod.yaml": pod(image)}, conf, locked(folder, *lock_images))
    if expected is None:
        assert found == []
    else:
        assert places(found) == [("pod.yaml", 5, 12)]
        assert expected in found[0].message and found[0].rule == rule and found[0].severity == "error"
        assert found[0].reference == image
