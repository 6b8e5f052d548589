"""The plan of `update` against a fake registry: what moves, the new texts, and nothing planned on a failure.

`tests/commands/update_test.py` runs `pinguard update` against a real registry.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.pin.update import UpdatePlan, plan_update
from pinguard.registry.manifest import Platform
from pinguard.resolve.settings import OnlineSettings
from pinguard.scan.paths import scan_paths
from testing.fake_registry import FakeRegistry, Response, Route, serve_manifests
from testing.images import Manifest, multi_platform
from tests.registry.conftest import REGISTRY, settings_for

REPO = "deep-learning-containers/ray"
NAME = f"{REGISTRY}/{REPO}"
BEFORE, AFTER = multi_platform("update-plan-before"), multi_platform("update-plan-after")


def _entry(image: Manifest) -> LockEntry:
    amd64, arm64 = image.children
    return LockEntry(name=NAME, tag="v1", digest=image.digest, media_type=image.media_type, size=len(image.data),
                     tag_kind="moving", frozen_tag=None, resolved_at="2026-11-30T05:00:00Z",
                     platforms={"linux/amd64": amd64.digest, "linux/arm64": arm64.digest})


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_text(f"kind: Pod\nspec:\n  containers:\n  - image: {NAME}:v1@{BEFORE.digest}\n")
    lockfile.write(Path("pinguard.lock"), Lock().with_entries([_entry(BEFORE)]))
    return tmp_path


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    with FakeRegistry() as started:
        yield started


def _plan(fake: FakeRegistry, work: Path) -> UpdatePlan:
    settings = OnlineSettings(settings_for(fake.url, work), (Platform("linux", "amd64"),), work / "cache")
    return plan_update(scan_paths(["pod.yaml"]), Path("pinguard.lock"), settings)


def _serve(fake: FakeRegistry, tags: dict[str, Manifest]) -> None:
    images = [BEFORE, AFTER, *BEFORE.children, *AFTER.children]
    fake.add(*serve_manifests(REPO, {**{tag: (image.media_type, image.data) for tag, image in tags.items()},
                                     **{image.digest: (image.media_type, image.data) for image in images}},
                              blobs={blob.digest: blob.data for image in images for blob in image.blobs}))


def test_a_moved_tag_is_planned_with_the_files_first_and_the_lockfile_last(fake: FakeRegistry, work: Path) -> None:
    _serve(fake, {"v1": AFTER})
    before = {path: path.read_bytes() for path in (Path("pod.yaml"), Path("pinguard.lock"))}
    plan = _plan(fake, work)
    assert [(rebuild.old.digest, rebuild.new.digest) for rebuild in plan.rebuilds] == [(BEFORE.digest, AFTER.digest)]
    [(pod, pinned), (lock, locked)] = plan.changes
    assert (pod.path, lock.path) == (Path("pod.yaml"), Path("pinguard.lock"))
    assert pinned == f"kind: Pod\nspec:\n  containers:\n  - image: {NAME}:v1@{AFTER.digest}\n"
    entry = lockfile.loads(locked).get(NAME, "v1")
    assert entry is not None and entry.digest == AFTER.digest
    assert plan.repinned == 1
    assert {path: path.read_bytes() for path in before} == before  # a plan writes nothing


def test_a_tag_that_stayed_plans_nothing(fake: FakeRegistry, work: Path) -> None:
    _serve(fake, {"v1": BEFORE})
    plan = _plan(fake, work)
    assert (plan.rebuilds, plan.changes, plan.repinned) == ([], [], 0)


def test_an_entry_that_cannot_be_checked_fails_the_plan_with_a_line_for_it(fake: FakeRegistry, work: Path) -> None:
    fake.add(Route("GET", rf"/v2/{REPO}/manifests/.+", Response(403)))
    with pytest.raises(PinguardError) as failed:
        _plan(fake, work)
    assert str(failed.value) == "nothing written"
    [line] = failed.value.details
    assert line.startswith(f"{NAME}:v1: error: ") and "access denied (403)" in line
