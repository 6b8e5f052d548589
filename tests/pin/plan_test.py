"""Pin planning: which files change and to what, and which references the lock does not know.

Nothing is written here; `tests/commands/pin_test.py` runs `pinguard pin` on golden files.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.lock.lockfile import Lock
from pinguard.pin.plan import NEEDS_HELM, plan_pins, repin
from pinguard.scan.paths import Scan, scan_paths
from testing.lockdata import lock_for, locked_test_digest

NGINX, REDIS = "docker.io/library/nginx", "docker.io/library/redis"
OLD = "sha256:" + "0" * 64


def _pod(*images: str) -> str:
    return "kind: Pod\nspec:\n  containers:\n" + "".join(f"  - image: {image}\n" for image in images)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _scan(tree: Path, **files: str) -> Scan:
    for name, text in files.items():
        (tree / f"{name}.yaml").write_text(text)
    result = scan_paths(["."])
    assert result.errors == []
    return result


def _texts(changes: Sequence[tuple[object, str]]) -> list[str]:
    return [text for _, text in changes]


def test_each_reference_is_pinned_to_its_locked_digest(tree: Path) -> None:
    result = _scan(tree, a=_pod("nginx:1.25", "redis"))
    changes, missing, _, _ = plan_pins(result, lock_for(result.found))
    nginx, redis = locked_test_digest(NGINX, "1.25"), locked_test_digest(REDIS, "latest")
    # Only the characters of each reference change; one without a tag is pinned as `latest`, its lock entry.
    assert _texts(changes) == [_pod(f"nginx:1.25@{nginx}", f"redis:latest@{redis}")]
    assert [scanned.file.path for scanned, _ in changes] == [Path("a.yaml")]
    assert missing == []


def test_a_file_pinned_to_the_lock_is_not_planned(tree: Path) -> None:
    lock = lock_for(_scan(tree, a=_pod("nginx:1.25")).found)
    pinned = _pod(f"nginx:1.25@{locked_test_digest(NGINX, '1.25')}")
    # a digest alone is no lock's
    assert plan_pins(_scan(tree, a=pinned, b=_pod("busybox@" + OLD)), lock) == ([], [], [], [])


def test_a_pin_to_another_digest_moves_to_the_locked_one(tree: Path) -> None:
    result = _scan(tree, a=_pod(f"nginx:1.25@{OLD}"))
    assert _texts(plan_pins(result, lock_for(result.found))[0]) == [
        _pod(f"nginx:1.25@{locked_test_digest(NGINX, '1.25')}")]


def test_what_the_lock_does_not_know_is_missing_and_the_rest_is_still_planned(tree: Path) -> None:
    result = _scan(tree, a=_pod("nginx:1.25", "redis:7.2"))
    nginx_only = lock_for(found for found in result.found if found.value == "nginx:1.25")
    changes, missing, _, _ = plan_pins(result, nginx_only)
    assert _texts(changes) == [_pod(f"nginx:1.25@{locked_test_digest(NGINX, '1.25')}", "redis:7.2")]
    assert [(found.value, found.line, found.column) for found in missing] == [("redis:7.2", 5, 12)]


def test_nothing_locked_plans_nothing(tree: Path) -> None:
    result = _scan(tree, a=_pod("nginx:1.25"))
    changes, missing, _, _ = plan_pins(result, Lock())
    assert changes == [] and [found.value for found in missing] == ["nginx:1.25"]


def test_repin_moves_only_the_pins_of_the_moved_tags(tree: Path) -> None:
    result = _scan(tree,
                   a=_pod(f"nginx:1.25@{OLD}", "nginx:1.25", f"redis:7.2@{OLD}", f"nginx:1.24@{OLD}"),
                   b=_pod(f"redis:7.2@{OLD}"))
    moved = lock_for(found for found in result.found if found.value == "nginx:1.25")
    new = locked_test_digest(NGINX, "1.25")
    # The unpinned reference is `pin`'s to pin; other names and tags, and files without them, are left alone.
    assert _texts(repin(result, moved)) == [
        _pod(f"nginx:1.25@{new}", "nginx:1.25", f"redis:7.2@{OLD}", f"nginx:1.24@{OLD}")]


@pytest.mark.usefixtures("no_helm")
def test_a_charts_values_read_without_helm_are_never_planned(tree: Path) -> None:
    (tree / "chart").mkdir()
    (tree / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    result = _scan(tree, **{"a": _pod("redis:7.2"), "chart/values": f"image: nginx:1.25@{OLD}\n"})
    lock = lock_for(result.found)
    with pytest.raises(PinguardError, match=re.escape(NEEDS_HELM)) as refused:
        plan_pins(result, lock)
    assert refused.value.details == (
        f"chart/values.yaml:1:8: docker.io/library/nginx:1.25@{OLD} is a chart's value: only Helm's render tells "
        "what writing it does",)
    with pytest.raises(PinguardError, match=re.escape(NEEDS_HELM)):  # `update` moving the tag: refused alike
        repin(result, lock)
    (tree / "chart" / "values.yaml").write_text(f"image: nginx:1.25@{locked_test_digest(NGINX, '1.25')}\n")
    result = _scan(tree)  # pinned to its locked digest: nothing to write there, the rest is planned
    assert [scanned.file.path.name for scanned, _ in plan_pins(result, lock).changes] == ["a.yaml"]
