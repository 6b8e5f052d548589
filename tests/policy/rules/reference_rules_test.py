"""The rules that look at one reference at a time, each a truth table: manifest in, findings out."""
# ruff: noqa: E501 - the truth table reads best one case a line
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pinguard.lock.lockfile import Lock, LockEntry, dumps
from pinguard.policy.rules import unused_lock_entry
from pinguard.policy.rules.common import Context
from pinguard.reference import parse
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for, locked_test_digest
from tests.counting import CountingText
from tests.policy.helpers import check_rule, places

DIGEST = locked_test_digest("docker.io/library/nginx", "1.25")
OTHER = "sha256:" + "f" * 64
MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def pod(image: str) -> str:
    return f"kind: Pod\nspec:\n  containers:\n  - name: a\n    image: {image}\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def locked(folder: Path, *images: str) -> Any:
    (folder / "lockme.yaml").write_text("".join(f"---\n{pod(i)}" for i in images))
    lock = lock_for(scan_paths(["lockme.yaml"]).found)
    (folder / "lockme.yaml").unlink()
    return lock


@pytest.mark.parametrize(
    ("rule", "image", "conf", "lock_images", "expected"),
    [
        # rule               image written                 conf                              locked            message part
        ("unpinned",         "nginx:1.25",                 {},                               [],               "has no digest"),
        ("unpinned",         f"nginx:1.25@{DIGEST}",       {},                               [],               None),
        ("unpinned",         "${IMAGE}",                   {},                               [],               None),
        ("not-locked",       "nginx:1.25",                 {},                               [],               "is not in pinguard.lock"),
        ("not-locked",       "nginx:1.25",                 {},                               ["nginx:1.25"],   None),
        ("not-locked",       "nginx",                      {},                               ["nginx:latest"], None),
        ("not-locked",       f"nginx@{OTHER}",             {},                               [],               f"{OTHER} is not a digest pinguard.lock holds for docker.io/library/nginx: write the tag"),
        ("not-locked",       f"nginx@{OTHER}",             {},                               ["nginx:1.25"],   "is not a digest pinguard.lock holds"),
        ("not-locked",       f"nginx@{DIGEST}",            {},                               ["nginx:1.25"],   None),
        ("not-locked",       f"redis@{DIGEST}",            {},                               ["nginx:1.25"],   "is not a digest pinguard.lock holds for docker.io/library/redis"),
        ("not-locked",       f"nginx:1.25@{OTHER}",        {},                               ["nginx:1.25"],   None),  # digest-mismatch says so
        ("digest-mismatch",  f"nginx:1.25@{OTHER}",        {},                               ["nginx:1.25"],   f"but pinguard.lock has {DIGEST}"),
        ("digest-mismatch",  f"nginx:1.25@{DIGEST}",       {},                               ["nginx:1.25"],   None),
        ("digest-mismatch",  "nginx:1.25",                 {},                               ["nginx:1.25"],   None),
        ("templated",        "${IMAGE}",                   {},                               [],               "cannot be checked: templated value"),
        ("templated",        "nginx:1.25",                 {},                               [],               None),
        ("denied-tags",      "nginx:latest",               {},                               [],               "uses the tag `latest`"),
        ("denied-tags",      "nginx",                      {},                               [],               "has no tag, so it means `latest`"),
        ("denied-tags",      "nginx",                      {"untagged": False},              [],               None),
        ("denied-tags",      "nginx:edge",                 {"tags": ["edge"]},               [],               "uses the tag `edge`"),
        ("denied-tags",      f"nginx@{OTHER}",             {},                               [],               None),
        ("allowed-registries", "nginx:1.25",               {"allow": ["public.ecr.aws/*"]},  [],               "is not from an allowed registry"),
        ("allowed-registries", "public.ecr.aws/x/ray:v1",  {"allow": ["public.ecr.aws/*"]},  [],               None),
        ("allowed-registries", "nginx:1.25",               {},                               [],               None),
        ("moving-tag",       "ghcr.io/o/app:v1.2",         {},                               ["ghcr.io/o/app:v1.2"], "names the moving tag `v1.2`"),
        ("moving-tag",       "ghcr.io/o/app:v1.2.3",       {},                               [],               None),
    ],
)
def test_rule(folder: Path, rule: str, image: str, conf: dict[str, Any], lock_images: list[str],
              expected: str | None) -> None:
    found = check_rule(folder, rule, {"pod.yaml": pod(image)}, conf, locked(folder, *lock_images))
    if expected is None:
        assert found == []
    else:
        assert places(found) == [("pod.yaml", 5, 12)]
        assert expected in found[0].message and found[0].rule == rule and found[0].severity == "error"
        assert found[0].reference == image


def test_moving_tag_names_the_frozen_tag_from_the_lock(folder: Path) -> None:
    lock = locked(folder, "ghcr.io/o/app:v1.2")
    entry = next(iter(lock))
    from pinguard.lock.lockfile import Lock, LockEntry

    lock = Lock().with_entries([LockEntry(**{**entry.__dict__, "frozen_tag": "v1.2.7"})])
    [finding] = check_rule(folder, "moving-tag", {"pod.yaml": pod("ghcr.io/o/app:v1.2")}, lock=lock)
    assert "the frozen tag `v1.2.7` serves the locked digest" in finding.message


def test_moving_tag_follows_the_policy_tag_patterns(folder: Path) -> None:
    extra = {"tags": [{"repository": "docker.io/library/*", "moving": r"^\d+\.\d+$", "frozen": r"^\d+\.\d+\.\d+$"}]}
    assert len(check_rule(folder, "moving-tag", {"pod.yaml": pod("nginx:1.25")}, extra=extra)) == 1
    assert check_rule(folder, "moving-tag", {"pod.yaml": pod("nginx:1.25.3")}, extra=extra) == []


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
