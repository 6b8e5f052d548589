"""Judging what pods report against the lock, as `run`'s watch and `audit` both do."""
from __future__ import annotations

from typing import Any

from pinguard.launch.pods import ALLOWED, NOT_ALLOWED, NOT_LOCKED, UNPINNED, judge, started
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.policy.model import Sidecar
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
    return [r.problem for r in judge(pod("ns", "p", [("c", image, image_id)]), LOCK).problems]


def test_the_index_digest_or_one_of_its_platform_images_counts_as_locked() -> None:
    assert _problems(PINNED, image_id_for(PINNED, docker=True)) == []
    assert _problems(PINNED, image_id_for(PINNED, AMD64)) == []  # a runtime that reports its platform's manifest
    assert _problems(PINNED, image_id_for(PINNED, ARM64)) == [NOT_LOCKED]  # locked, but for another tag


def test_an_untagged_image_may_run_any_entry_of_its_name() -> None:
    assert _problems(f"{NAME}@{ARM64}", f"{NAME}@{ARM64}") == []
    assert _problems(f"{NAME}@{OTHER}", f"{NAME}@{OTHER}") == [NOT_LOCKED]


def test_a_bare_image_id_cannot_be_matched_to_the_lock() -> None:
    # Loaded onto the node (`kind load`, `ctr import`), never pulled by digest.
    [report] = judge(pod("ns", "p", [("c", PINNED, INDEX)]), LOCK).problems
    assert report.problem == NOT_LOCKED and report.message.endswith(f"runs {INDEX}; the lock holds {INDEX}")


def test_unpinned_is_reported_even_before_the_container_runs() -> None:
    waiting = pod("ns", "p", [("c", f"{NAME}:train-ml-cuda-v1.1", "")])
    assert [r.problem for r in judge(waiting, LOCK).problems] == [UNPINNED]
    assert not started(waiting)


def test_init_containers_are_judged_too() -> None:
    body = pod("ns", "p", [("c", PINNED, image_id_for(PINNED))])
    body["spec"]["initContainers"] = [{"name": "fetch", "image": "busybox:1.36"}]
    body["status"]["initContainerStatuses"] = [{"name": "fetch", "imageID": image_id_for("busybox:1.36")}]
    assert [(r.container, r.problem) for r in judge(body, LOCK).problems] == [("fetch", UNPINNED),
                                                                              ("fetch", NOT_LOCKED)]
    assert started(body)


# Sidecars: containers the manifest does not declare, which the policy may let run unlocked.

PROXY = "docker.io/istio/proxyv2:1.22.0"
ISTIO = Sidecar("istio-proxy", "docker.io/istio/proxyv2:*")


def _meshed(sidecar: str = "istio-proxy", image: str = PROXY) -> dict[str, Any]:
    return pod("ns", "head", [("ray-head", PINNED, image_id_for(PINNED)), (sidecar, image, image_id_for(image))])


def _judged(body: dict[str, Any], *sidecars: Sidecar, declared: frozenset[str] | None = frozenset({"ray-head"})
            ) -> tuple[list[tuple[str, str]], list[str]]:
    judged = judge(body, LOCK, sidecars, declared)
    return [(r.container, r.problem) for r in judged.problems], [r.container for r in judged.allowed]


def test_an_allowed_sidecar_is_reported_apart_and_stops_nothing() -> None:
    judged = judge(_meshed(), LOCK, [ISTIO], frozenset({"ray-head"}))
    assert judged.problems == []
    [report] = judged.allowed
    assert (report.container, report.problem) == ("istio-proxy", ALLOWED)
    assert report.message == (f'allowed by policy (sidecars entry {{name: "istio-proxy", image: '
                              f'"docker.io/istio/proxyv2:*"}}): image `{PROXY}` runs {image_id_for(PROXY)}, '
                              "which the lock does not vouch for")


def test_a_sidecar_in_neither_the_lock_nor_the_policy_says_how_to_allow_it() -> None:
    judged = judge(_meshed(), LOCK, [], frozenset({"ray-head"}))
    assert [r.problem for r in judged.problems] == [UNPINNED, NOT_LOCKED, NOT_ALLOWED]
    assert judged.problems[-1].message == (
        "not in the manifest (injected into the pod?): lock its image, or allow it in the policy `run` uses "
        '(--policy FILE): `sidecars: [{name: "istio-proxy", image: "docker.io/istio/proxyv2:*"}]`')


def test_a_sidecar_allowed_by_name_with_another_image_is_denied_naming_the_image_wanted() -> None:
    problems, allowed = _judged(_meshed(image="docker.io/evil/proxy:1"), ISTIO)
    assert (problems, allowed) == ([("istio-proxy", UNPINNED), ("istio-proxy", NOT_LOCKED),
                                    ("istio-proxy", NOT_ALLOWED)], [])
    message = judge(_meshed(image="docker.io/evil/proxy:1"), LOCK, [ISTIO], {"ray-head"}).problems[-1].message
    assert message == ("not in the manifest, and the policy allows a sidecar named `istio-proxy` only with image "
                       "`docker.io/istio/proxyv2:*`")


def test_a_container_the_manifest_declares_is_never_excused_as_a_sidecar() -> None:
    rebuilt = pod("ns", "head", [("ray-head", PINNED, image_id_for(PINNED, OTHER))])
    assert _judged(rebuilt, Sidecar("ray-*"), Sidecar(image=f"{NAME}:*")) == ([("ray-head", NOT_LOCKED)], [])


def test_a_locked_sidecar_needs_no_entry() -> None:
    assert _judged(_meshed(image=PINNED)) == ([], [])


def test_without_a_manifest_any_container_may_be_allowed_and_none_is_told_how() -> None:
    # `audit`: no manifest says which containers are declared.
    assert _judged(_meshed(), ISTIO, declared=None) == ([], ["istio-proxy"])
    assert _judged(_meshed(), declared=None) == ([("istio-proxy", UNPINNED), ("istio-proxy", NOT_LOCKED)], [])


def test_a_digest_only_image_is_suggested_by_its_name() -> None:
    image = f"docker.io/hashicorp/vault@{OTHER}"
    message = judge(_meshed("vault-agent", image), LOCK, [], {"ray-head"}).problems[-1].message
    assert message.endswith('`sidecars: [{name: "vault-agent", image: "docker.io/hashicorp/vault"}]`')
