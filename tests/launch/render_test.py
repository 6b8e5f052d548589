"""The object `pinguard run` submits: every image at its locked digest, marked for the in-pod guard."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.launch.gate import Gated
from pinguard.launch.render import IMAGE_ANNOTATION, LOCK_ANNOTATION, Job, render
from pinguard.lock.lockfile import Lock
from pinguard.scan.paths import scan_paths
from testing.lockdata import INDEX, lock_for, locked_test_digest

LOCK_SHA256 = "ab" * 32
RAY = locked_test_digest("docker.io/rayproject/ray", "2.9.0")
RAYJOB = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: train
spec:
  entrypoint: python /app/train.py
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.9.0
              env:
                - {name: PINGUARD_CONTAINER, value: forged}
                - {name: KEEP, value: "1"}
    workerGroupSpecs:
      - replicas: 2
        numOfHosts: 2
        template:
          spec:
            initContainers:
              - name: init
                image: busybox:1.36
            containers:
              - name: ray-worker
                image: rayproject/ray:2.9.0
"""


def _gated(folder: Path, text: str, lock: Lock | None = None) -> Gated:
    (folder / "job.yaml").write_text(text)
    scanned = scan_paths([str(folder / "job.yaml")])
    return Gated(scanned.files[0], lock_for(scanned.found) if lock is None else lock, LOCK_SHA256)


def _env(container: dict[str, object]) -> dict[str, object]:
    return {item["name"]: item.get("value", item.get("valueFrom")) for item in container["env"]}  # type: ignore


def test_every_image_is_pinned_and_every_container_told_what_it_must_run(tmp_path: Path) -> None:
    job = render(_gated(tmp_path, RAYJOB), "ml")
    assert (job.kind, job.plural, job.version, job.name, job.namespace) == ("RayJob", "rayjobs", "v1", "train", "ml")
    assert job.annotations == {LOCK_ANNOTATION: LOCK_SHA256, IMAGE_ANNOTATION: f"docker.io/rayproject/ray:2.9.0@{RAY}"}
    head, worker = job.pod_templates()
    (ray_head,) = head["spec"]["containers"]
    assert ray_head["image"] == f"rayproject/ray:2.9.0@{RAY}"
    assert _env(ray_head) == {"KEEP": "1", "PINGUARD_EXPECTED_DIGEST": RAY, "PINGUARD_LOCK_SHA256": LOCK_SHA256,
                              "PINGUARD_CONTAINER": "ray-head",  # the manifest's own value replaced
                              "POD_NAME": {"fieldRef": {"fieldPath": "metadata.name"}},
                              "POD_NAMESPACE": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
    (init,) = worker["spec"]["initContainers"]
    assert _env(init)["PINGUARD_EXPECTED_DIGEST"] == locked_test_digest("docker.io/library/busybox", "1.36")
    assert worker["metadata"]["annotations"][IMAGE_ANNOTATION] == f"docker.io/rayproject/ray:2.9.0@{RAY}"
    assert job.expected_pods() == 1 + 2 * 2 + 1  # the head, two workers of two hosts, the submitter
    assert (tmp_path / "job.yaml").read_text() == RAYJOB  # the file is left alone


@pytest.mark.parametrize(("text", "message"), [
    (RAYJOB.replace("name: train", "name: train\n  namespace: prod"),
     "the manifest's namespace prod is not --namespace ml"),
    (RAYJOB + "---\napiVersion: v1\nkind: ConfigMap\n",
     "launches one ray.io RayJob or RayCluster, found RayJob, ConfigMap"),
    (RAYJOB.replace("kind: RayJob", "kind: RayCluster").replace("  entrypoint: python /app/train.py\n", ""),
     "RayCluster train: no entrypoint: set the annotation pinguard.dev/entrypoint"),
])
def test_what_run_cannot_submit_is_refused_before_anything_runs(text: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(PinguardError, match=message):
        render(_gated(tmp_path, text), "ml")


def test_an_image_the_lock_does_not_hold_is_refused_at_its_place(tmp_path: Path) -> None:
    with pytest.raises(PinguardError, match=r"job\.yaml:13:22: `rayproject/ray:2\.9\.0` is not a locked image"):
        render(_gated(tmp_path, RAYJOB, Lock()), None)


def test_a_raycluster_says_its_entrypoint_and_runtime_env_in_annotations() -> None:
    cluster = Job({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c", "annotations": {
        "pinguard.dev/entrypoint": "python train.py", "runtimeEnvYAML": "pip: [torch]\n"}},
        "spec": {"headGroupSpec": {"template": {}}, "workerGroupSpecs": [{"minReplicas": 3}]}})
    assert cluster.entrypoint() == "python train.py" and cluster.runtime_env() == {"pip": ["torch"]}
    assert cluster.expected_pods() == 4 and not cluster.submits_with_a_pod
    listed = Job({**cluster.body, "metadata": {"name": "c", "annotations": {"runtimeEnvYAML": "[1, 2]"}}})
    with pytest.raises(PinguardError, match="annotation runtimeEnvYAML: expected a YAML mapping"):
        listed.runtime_env()


def test_an_image_pinned_to_a_platform_image_of_its_entry_runs_that_digest(tmp_path: Path) -> None:
    platform = "sha256:" + "c" * 64
    lock = _gated(tmp_path, RAYJOB).lock
    ray = lock.get("docker.io/rayproject/ray", "2.9.0")
    assert ray is not None
    lock = lock.with_entries([replace(ray, media_type=INDEX, platforms={"linux/amd64": platform})])
    job = render(_gated(tmp_path, RAYJOB.replace("rayproject/ray:2.9.0", f"rayproject/ray@{platform}"), lock), None)
    (ray_head,) = job.pod_templates()[0]["spec"]["containers"]
    assert ray_head["image"] == f"rayproject/ray@{platform}"
    assert _env(ray_head)["PINGUARD_EXPECTED_DIGEST"] == platform  # what the guard compares the running digest with
    assert job.annotations[IMAGE_ANNOTATION] == f"docker.io/rayproject/ray:2.9.0@{platform}"
    with pytest.raises(PinguardError, match=r"`rayproject/ray@sha256:d{64}` is not a locked image"):
        render(_gated(tmp_path, RAYJOB.replace("rayproject/ray:2.9.0", "rayproject/ray@sha256:" + "d" * 64), lock),
               None)
