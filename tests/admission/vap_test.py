"""The exported ValidatingAdmissionPolicies, run as the API server runs them, on what a cluster would be asked to admit.

Admitted: every object `pinguard run` submits and every object and pod KubeRay makes
from it, from the training manifests and the examples after `pinguard pin`. Denied,
with a message naming the image and the entry it should have been: tag-only images,
another digest, a sidecar or init container the lock does not hold, an ephemeral
container, for every kind that holds a pod spec, each judged by one policy of its shape.
"""
from __future__ import annotations

import copy
import io
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml

from pinguard.admission import params, vap
from pinguard.admission.objects import Source
from pinguard.cli import main
from pinguard.errors import PinguardError
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.reference import parse
from pinguard.scan.paths import scan_paths
from testing.lockdata import INDEX, lock_for, locked_test_digest
from tests.admission.cel import evaluate
from tests.admission.helpers import RESOURCES, Verdict, admit, holding, own, params_of, pod_spec

ROOT = Path(__file__).resolve().parents[2]
RAY = "public.ecr.aws/deep-learning-containers/ray"
TAG = "train-ml-cuda-v1.1"
DIGEST = locked_test_digest(RAY, TAG)
LOCKED = f"{RAY}:{TAG}@{DIGEST}"
OTHER = "sha256:" + "b" * 64
PLATFORMS = ("linux/amd64", "linux/arm64")
MANIFESTS = ("training/rayjob.yaml", "training/raycluster.yaml", "examples/dlc/rayjob.yaml")
NO_ENTRY = "the lock has no entry for it: `pinguard lock`, then `pinguard pin`"


def platform_digest(entry: LockEntry, platform: str) -> str:
    return locked_test_digest(entry.name, f"{entry.tag} {platform}")


def with_platforms(lock: Lock) -> Lock:
    """Each entry an index of one image per platform, as a multi-arch image is locked."""
    return Lock().with_entries(replace(entry, media_type=INDEX, platforms={p: platform_digest(entry, p)
                                                                            for p in PLATFORMS}) for entry in lock)


def source_of(lock: Lock) -> Source:
    return Source(lock, "pinguard.lock", "0" * 64)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The training manifests and the DLC example with a lock for them (multi-arch), pinned."""
    for manifest in MANIFESTS:
        (tmp_path / manifest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / manifest, tmp_path / manifest)
    monkeypatch.chdir(tmp_path)
    lockfile.write(tmp_path / "pinguard.lock", with_platforms(lock_for(scan_paths(list(MANIFESTS)).found)))
    assert main(["pin", *MANIFESTS], env={}, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    return tmp_path


@pytest.fixture
def objects(project: Path) -> list[dict[str, Any]]:
    """What `pinguard export admission` applies for the project's lock."""
    lock = lockfile.read(project / "pinguard.lock")
    return vap.objects(source_of(lock), (), "deny")


def kuberay_makes(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The object and what KubeRay creates from it: the RayCluster of a RayJob, the head and worker pods (each
    worker with KubeRay's `wait-gcs-ready` init container on its Ray image), and in K8sJobMode the submitter Job
    (KubeRay's default `ray-job-submitter` on the head's image) and its pod."""
    made = [job]
    cluster = job["spec"] if job["kind"] == "RayCluster" else job["spec"]["rayClusterSpec"]
    if job["kind"] == "RayJob":
        made.append({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c"}, "spec": cluster})
    head = cluster["headGroupSpec"]["template"]["spec"]
    made.append(_pod(head))
    for group in cluster.get("workerGroupSpecs") or []:
        spec = copy.deepcopy(group["template"]["spec"])
        ray_image = spec["containers"][0]["image"]
        spec["initContainers"] = [{"name": "wait-gcs-ready", "image": ray_image}, *spec.get("initContainers", [])]
        made.append(_pod(spec))
    if job["kind"] == "RayJob" and job["spec"].get("submissionMode", "K8sJobMode") == "K8sJobMode":
        submitter = job["spec"].get("submitterPodTemplate") or {
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "ray-job-submitter", "image": head["containers"][0]["image"]}]}}
        made.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": job["metadata"]["name"]},
                     "spec": {"template": submitter}})
        made.append(_pod(submitter["spec"]))
    return made


def _pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


@pytest.mark.parametrize(("manifest", "kinds"), [
    ("training/rayjob.yaml", ["RayJob", "RayCluster", "Pod", "Pod", "Job", "Pod"]),
    ("training/raycluster.yaml", ["RayCluster", "Pod", "Pod"]),
])
def test_everything_run_launches_is_admitted(project: Path, objects: list[dict[str, Any]], manifest: str,
                                             kinds: list[str]) -> None:
    out = io.StringIO()
    assert main(["run", "--dry-run", "--namespace", "team", manifest], env={}, stdout=out, stderr=io.StringIO()) == 0
    made = kuberay_makes(yaml.safe_load(out.getvalue()))
    assert [obj["kind"] for obj in made] == kinds
    for obj in made:
        assert admit(objects, obj) == Verdict(True), obj["kind"]


@pytest.mark.parametrize("manifest", MANIFESTS)
def test_the_pinned_manifests_and_what_they_make_are_admitted(project: Path, objects: list[dict[str, Any]],
                                                              manifest: str) -> None:
    job = yaml.safe_load((project / manifest).read_text())
    for obj in kuberay_makes(job):
        assert admit(objects, obj) == Verdict(True), obj["kind"]


def test_before_pin_every_object_is_denied_and_told_what_to_pin(project: Path, objects: list[dict[str, Any]]) -> None:
    job = yaml.safe_load((ROOT / "training" / "rayjob.yaml").read_text())
    message = f"container ray-head: image `{RAY}:{TAG}` is not pinned to a digest of the lock; pin it to {LOCKED}"
    for obj in kuberay_makes(job):
        verdict = admit(objects, obj)
        assert not verdict.allowed and verdict.action == "Deny", obj["kind"]
        assert verdict.message is not None and verdict.message.endswith(f"is not pinned to a digest of the lock; "
                                                                        f"pin it to {LOCKED}")
    assert admit(objects, kuberay_makes(job)[2]).message == message


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_platform_image_of_a_locked_index_is_admitted(objects: list[dict[str, Any]], platform: str) -> None:
    entry = LockEntry(RAY, TAG, DIGEST, INDEX, 0, "other", None, "t", {})
    image = f"{RAY}@{platform_digest(entry, platform)}"
    assert admit(objects, _pod(pod_spec(("ray", image)))) == Verdict(True)


# (what the pod spec runs, the message): every denial names the container, the image and the entry.
DENIED = {
    "tag only": (pod_spec(("ray", f"{RAY}:{TAG}")),
                 f"container ray: image `{RAY}:{TAG}` is not pinned to a digest of the lock; pin it to {LOCKED}"),
    "another digest": (pod_spec(("ray", f"{RAY}:{TAG}@{OTHER}")),
                       f"container ray: image `{RAY}:{TAG}@{OTHER}` is not pinned to a digest of the lock; "
                       f"pin it to {LOCKED}"),
    "another tag": (pod_spec(("ray", f"{RAY}:{TAG}.9")),
                    f"container ray: image `{RAY}:{TAG}.9` is not pinned to a digest of the lock; {NO_ENTRY}"),
    "a sidecar not in the lock": (
        pod_spec(("ray", LOCKED), ("istio-proxy", "docker.io/istio/proxyv2:1.22.0")),
        f"container istio-proxy: image `docker.io/istio/proxyv2:1.22.0` is not pinned to a digest of the lock; "
        f"{NO_ENTRY}"),
    "an init container not in the lock": (
        pod_spec(("ray", LOCKED), init=[("setup", f"busybox@{OTHER}")]),
        f"container setup: image `busybox@{OTHER}` is not pinned to a digest of the lock; {NO_ENTRY}"),
    "a locked digest after another": (
        pod_spec(("ray", f"{RAY}@{OTHER}@{DIGEST}")),
        f"container ray: image `{RAY}@{OTHER}@{DIGEST}` is not pinned to a digest of the lock; {NO_ENTRY}"),
}


@pytest.mark.parametrize("kind", RESOURCES)
@pytest.mark.parametrize("case", DENIED)
def test_every_kind_denies_what_the_lock_does_not_hold(objects: list[dict[str, Any]], kind: str, case: str) -> None:
    spec, message = DENIED[case]
    assert admit(objects, holding(kind, spec)) == Verdict(False, message, "Deny")


@pytest.mark.parametrize("kind", RESOURCES)
def test_every_kind_admits_what_the_lock_holds(objects: list[dict[str, Any]], kind: str) -> None:
    spec = pod_spec(("ray", LOCKED), init=[("copy", f"{RAY}@{DIGEST}")])
    assert admit(objects, holding(kind, spec)) == Verdict(True)


def test_a_rayjob_submitter_template_is_judged_too(objects: list[dict[str, Any]]) -> None:
    job = holding("RayJob", pod_spec(("ray", LOCKED)))
    job["spec"]["submitterPodTemplate"] = {"spec": pod_spec(("submitter", "rayproject/ray:2.40.0"))}
    assert admit(objects, job).message == (f"container submitter: image `rayproject/ray:2.40.0` is not pinned to a "
                                           f"digest of the lock; {NO_ENTRY}")
    del job["spec"]["rayClusterSpec"]  # a RayJob that runs on a cluster it selects holds only the submitter
    assert not admit(objects, job).allowed


def test_an_ephemeral_container_is_judged_when_it_is_added(objects: list[dict[str, Any]]) -> None:
    running = _pod(pod_spec(("ray", LOCKED)))
    debugged = copy.deepcopy(running)
    debugged["spec"]["ephemeralContainers"] = [
        {"name": "debugger", "image": "busybox:1.36", "targetContainerName": "ray"}]
    verdict = admit(objects, debugged, operation="UPDATE", old=running, subresource="ephemeralcontainers")
    assert verdict == Verdict(False, f"container debugger: image `busybox:1.36` is not pinned to a digest of the "
                                     f"lock; {NO_ENTRY}", "Deny")
    debugged["spec"]["ephemeralContainers"][0]["image"] = LOCKED
    assert admit(objects, debugged, operation="UPDATE", old=running, subresource="ephemeralcontainers").allowed


def test_an_update_is_judged_on_the_images_it_brings(objects: list[dict[str, Any]]) -> None:
    before = _pod(pod_spec(("app", "nginx:1.25")))  # made before the policy was applied
    relabelled = copy.deepcopy(before)
    relabelled["metadata"]["labels"] = {"team": "ml"}
    assert admit(objects, relabelled, operation="UPDATE", old=before) == Verdict(True)
    changed = _pod(pod_spec(("app", "nginx:1.26")))
    assert not admit(objects, changed, operation="UPDATE", old=before).allowed
    deployment, moved = holding("Deployment", pod_spec(("app", "nginx:1.25"))), holding("Deployment", pod_spec(
        ("app", LOCKED), ("sidecar", "nginx:1.25")))
    assert admit(objects, moved, operation="UPDATE", old=deployment).allowed  # the image was already there


def test_the_binding_leaves_kube_system_alone_unless_namespaces_are_named(project: Path) -> None:
    source = source_of(lockfile.read(project / "pinguard.lock"))
    unlocked = _pod(pod_spec(("app", "nginx:1.25")))
    everywhere = vap.objects(source, (), "deny")
    assert admit(everywhere, unlocked, namespace="kube-system").applies is False
    assert not admit(everywhere, unlocked, namespace="default").allowed
    named = vap.objects(source, ("research", "team"), "deny")
    assert admit(named, unlocked, namespace="default").applies is False
    assert not admit(named, unlocked, namespace="research").allowed
    assert {obj["metadata"]["name"].partition(".")[2] for obj in own(named)} == {"research.team"}


def test_every_kind_is_judged_by_the_one_policy_of_its_shape_which_names_its_versions(
        objects: list[dict[str, Any]]) -> None:
    policies = [obj for obj in objects if obj["kind"] == "ValidatingAdmissionPolicy"]
    rules = [rule for policy in policies for rule in policy["spec"]["matchConstraints"]["resourceRules"]]
    assert all("*" not in rule[field] for rule in rules for field in ("apiGroups", "apiVersions", "resources"))
    for kind, (group, version, resource) in RESOURCES.items():
        judging = [policy["metadata"]["name"] for policy in policies if any(
            group in rule["apiGroups"] and version in rule["apiVersions"] and resource in rule["resources"]
            for rule in policy["spec"]["matchConstraints"]["resourceRules"])]
        assert len(judging) == 1, kind
    assert admit(objects, holding("ReplicationController", pod_spec(("app", "nginx:1.25")))).allowed is False
    assert admit(objects, holding("RayCronJob", pod_spec(("app", "nginx:1.25")))).allowed is False


@pytest.mark.parametrize(("mode", "action"), [("warn", "Warn"), ("audit", "Audit")])
def test_warn_and_audit_admit_and_say_why(objects: list[dict[str, Any]], mode: str, action: str) -> None:
    source = source_of(Lock().with_entries([LockEntry(RAY, TAG, DIGEST, INDEX, 0, "other", None, "t", {})]))
    verdict = admit(vap.objects(source, (), mode), _pod(pod_spec(("ray", f"{RAY}:{TAG}"))))
    assert verdict == Verdict(True, f"container ray: image `{RAY}:{TAG}` is not pinned to a digest of the lock; "
                                    f"pin it to {LOCKED}", action)


def entry(name: str, tag: str, digest: str | None = None, **platforms: str) -> LockEntry:
    return LockEntry(name, tag, digest or locked_test_digest(name, tag), INDEX, 0, "other", None, "t",
                     {p.replace("_", "/"): d for p, d in platforms.items()})


def test_the_params_hold_each_digest_and_each_entry_under_its_name() -> None:
    shared = "sha256:" + "d" * 64
    lock = Lock().with_entries([entry("docker.io/library/nginx", "1.25", shared, linux_arm64="sha256:" + "e" * 64),
                                entry("docker.io/library/nginx", "1.25.3", shared),
                                entry("localhost:5000/team_x/app", "latest", "sha256:" + "f" * 64)])
    [configmap] = params_of(vap.objects(source_of(lock), (), "deny"))
    assert configmap["data"] == {
        "d" * 64: "", "e" * 64: "", "f" * 64: "",
        "digests.from": "00", "digests.to": "ff", "names.class": "0", "names.classes": "1",
        "docker.io_slibrary_snginx_c1.25": "d" * 64, "docker.io_slibrary_snginx_c1.25.3": "d" * 64,
        "localhost_c5000_steam__x_sapp_clatest": "f" * 64,
    }
    assert configmap["metadata"]["name"] == "pinguard-lock"
    assert configmap["metadata"]["labels"]["pinguard.dev/layout"] == "1x1"


REFERENCES = ["nginx", "nginx:1.25", "library/nginx:1.25", "docker.io/nginx:1.25", "index.docker.io/library/nginx:1.25",
              "docker.io/library/nginx:1.25@sha256:" + "0" * 64, "user/app", "user/app:v1_2-3",
              "localhost/app:1", "localhost:5000/team/app", "localhost:5000/team/app:latest", "Registry.local/app",
              "ghcr.io/org/sub/app:tag", "[::1]:5000/app:1", "127.0.0.1:5000/a__b/c.d-e:f", "app@sha256:" + "1" * 64,
              "public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1"]


@pytest.mark.parametrize("reference", REFERENCES)
def test_an_image_s_name_and_tag_are_written_as_the_lock_s_are(reference: str) -> None:
    parsed = parse(reference)
    written = f"{parsed.name}:{parsed.tag or 'latest'}"
    image = celpy.json_to_cel(reference)
    name = evaluate(vap.name_of("i"), {"i": image})
    assert name == written
    assert evaluate(vap.key_of("n"), {"n": name}) == params.key(written)


@pytest.mark.parametrize("image", ["", "@", "a@", ":", "/", "//:", "a/:b", "::::", "a@b@c", "é/ü:ö", "a" * 300 + ":x"])
def test_any_image_has_a_name_without_an_error(image: str) -> None:
    assert isinstance(evaluate(vap.name_of("i"), {"i": celpy.json_to_cel(image)}), str)


@pytest.mark.parametrize(("image", "named"), [
    ("nginx:1.25", "nginx:1.25@"), ("library/nginx:1.25", "nginx:1.25@"), ("docker.io/nginx:1.25", "nginx:1.25@"),
    ("index.docker.io/library/nginx:1.25.3@sha256:" + "0" * 64, "nginx:1.25.3@"),
    ("localhost:5000/team/app", "team/app:latest@"), ("localhost:5000/team/app:latest", "team/app:latest@"),
])
def test_the_message_finds_the_entry_however_the_image_is_written(image: str, named: str) -> None:
    lock = Lock().with_entries([entry("docker.io/library/nginx", "1.25"), entry("docker.io/library/nginx", "1.25.3"),
                                entry("localhost:5000/team/app", "latest")])
    message = admit(vap.objects(source_of(lock), (), "deny"), _pod(pod_spec(("c", image)))).message
    assert message is not None and named in message.partition("; pin it to ")[2]


def test_a_container_without_an_image_is_denied(objects: list[dict[str, Any]]) -> None:
    verdict = admit(objects, _pod({"containers": [{"name": "empty"}]}))
    assert verdict == Verdict(False, f"container empty: image `` is not pinned to a digest of the lock; {NO_ENTRY}",
                              "Deny")


@pytest.mark.parametrize(("name", "tag"), [("Not An Image", "1"), ("nginx", "1@sha256:" + "0" * 64), ("nginx", "a b")])
def test_an_entry_that_is_no_image_name_and_tag_is_a_clear_error(name: str, tag: str) -> None:
    lock = Lock().with_entries([entry(name, tag, "sha256:" + "1" * 64)])
    with pytest.raises(PinguardError, match=rf"^pinguard.lock: {re.escape(name)}:{re.escape(tag)}: "):
        vap.objects(source_of(lock), (), "deny")

