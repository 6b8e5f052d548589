"""Judging what pods report against the lock, as `run`'s watch and `audit` both do."""
from __future__ import annotations

from pinguard.launch.pods import NOT_LOCKED, UNPINNED, judge, started
from pinguard.lockfile import Lock, LockEntry
from testing.fake_kube import image_id_for, pod

NAME = "public.ecr.aws/deep-learning-containers/ray"
INDEX, AMD64, ARM64, OTHER = ("sha256:" + c * 64 for c in "1234")
LOCK = Lock().with_entries([
    LockEntry(name=NAME, tag="train-ml-cuda-v1.1", digest=INDEX, media_type="application/vnd.oci.image.index.v1+json",
              size=1609, tag_kind="moving", frozen_tag=None, resolved_at="2026-11-30T05:00:00Z",
              platforms={"linux/amd64": AMD64}),
    LockEntry(name=NAME, tag="train-ml-cpu-v1.1", digest=ARM64, media_type="application/vnd.oci.image.manifest.v1+json",
              size=500, tag_kind="moving", frozen_tag=None, resolved_at="2026-11-30T05:00:00Z", platforms={}),
])
PINNED = f"{NAME}:train-ml-cuda-v1.1@{INDEX}"


def _problems(image: str, image_id: str) -> list[str]:
    return [r.problem for r in judge(pod("ns", "p", [("c", image, image_id)]), LOCK)]


def test_the_index_digest_or_one_of_its_platform_images_counts_as_locked() -> None:
    assert _problems(PINNED, image_id_for(PINNED, docker=True)) == []
    assert _problems(PINNED, image_id_for(PINNED, AMD64)) == []  # a runtime that reports its platform's manifest
    assert _problems(PINNED, image_id_for(PINNED, ARM64)) == [NOT_LOCKED]  # locked, but for another tag


def test_an_untagged_image_may_run_any_entry_of_its_name() -> None:
    assert _problems(f"{NAME}@{ARM64}", f"{NAME}@{ARM64}") == []
    assert _problems(f"{NAME}@{OTHER}", f"{NAME}@{OTHER}") == [NOT_LOCKED]


def test_a_bare_image_id_cannot_be_matched_to_the_lock() -> None:
    # Loaded onto the node (`kind load`, `ctr import`), never pulled by digest.
    [report] = judge(pod("ns", "p", [("c", PINNED, INDEX)]), LOCK)
    assert report.problem == NOT_LOCKED and report.message.endswith(f"runs {INDEX}; the lock holds {INDEX}")


def test_unpinned_is_reported_even_before_the_container_runs() -> None:
    waiting = pod("ns", "p", [("c", f"{NAME}:train-ml-cuda-v1.1", "")])
    assert [r.problem for r in judge(waiting, LOCK)] == [UNPINNED]
    assert not started(waiting)


def test_init_containers_are_judged_too() -> None:
    body = pod("ns", "p", [("c", PINNED, image_id_for(PINNED))])
    body["spec"]["initContainers"] = [{"name": "fetch", "image": "busybox:1.36"}]
    body["status"]["initContainerStatuses"] = [{"name": "fetch", "imageID": image_id_for("busybox:1.36")}]
    assert [(r.container, r.problem) for r in judge(body, LOCK)] == [("fetch", UNPINNED), ("fetch", NOT_LOCKED)]
    assert started(body)
