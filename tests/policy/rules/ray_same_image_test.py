"""ray-same-image as a truth table: Ray manifest in, findings (line, column, message part) out."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.policy.rules import ray_same_image
from tests.conftest import CORPUS
from tests.policy.helpers import assert_found, check_rule, files_flagged

RAY = "rayproject/ray:2.40.0-py311-gpu"
DIGEST = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64


def cluster(head: str, *workers: str, header: str = "kind: RayCluster\nspec:\n") -> str:
    """A Ray cluster (a RayCluster unless `header` says otherwise) with one worker group per image."""
    body = ["headGroupSpec:", "  template:", "    spec:", "      containers:",
            f"        - {{name: ray-head, image: '{head}'}}", "workerGroupSpecs:"]
    for n, image in enumerate(workers):
        body += [f"  - groupName: g{n}", "    template:", "      spec:",
                 f"        containers: [{{name: ray, image: '{image}'}}, {{name: sidecar, image: busybox}}]"]
    nest = "  " * (header.count("\n") - 1)  # the cluster spec sits under the header's last key
    return "\n".join(["apiVersion: ray.io/v1", *header.splitlines(), *(nest + line for line in body)]) + "\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        # the same image: same tag, same digest (whatever the tags), or a spelling of the same name
        (cluster(RAY, RAY, RAY), []),
        (cluster(f"{RAY}@{DIGEST}", f"rayproject/ray:2.40.0-py311-cu121@{DIGEST}"), []),
        (cluster("docker.io/rayproject/ray:2.40.0", "rayproject/ray:2.40.0"), []),
        (cluster("rayproject/ray", "rayproject/ray:latest"), []),
        # another tag, another digest, another repository, or a digest on one side only
        (cluster(RAY, RAY, "rayproject/ray:2.39.0-py311-gpu"),
         [(17, 44, "worker group `g1` runs `rayproject/ray:2.39.0-py311-gpu`, but the head runs "
                   f"`{RAY}`: Ray needs the same Python, Ray and CUDA on every node; use the head's image")]),
        (cluster(f"{RAY}@{DIGEST}", f"{RAY}@{OTHER}"), [(13, 44, f"runs `{RAY}@{OTHER}`")]),
        (cluster(RAY, "rayproject/ray-ml:2.40.0-py311-gpu"), [(13, 44, "runs `rayproject/ray-ml")]),
        (cluster(RAY, f"{RAY}@{DIGEST}"), [(13, 44, f"but the head runs `{RAY}`")]),
        # templated values cannot be compared
        (cluster("${IMAGE}", RAY), []),
        (cluster(RAY, "${WORKER_IMAGE}", "rayproject/ray:2.39.0"), [(17, 44, "worker group `g1`")]),
        # the other Ray kinds keep the cluster deeper; other kinds are not Ray clusters
        (cluster(RAY, "rayproject/ray:2.39.0", header="kind: RayJob\nspec:\n  rayClusterSpec:\n"),
         [(14, 46, "worker group `g0`")]),
        (cluster(RAY, "rayproject/ray:2.39.0", header="kind: RayService\nspec:\n  rayClusterConfig:\n"),
         [(14, 46, "worker group `g0`")]),
        (cluster(RAY, "rayproject/ray:2.39.0", header="kind: Deployment\nspec:\n"), []),
    ],
)
def test_ray_same_image(folder: Path, manifest: str, expected: list[tuple[int, int, str]]) -> None:
    found = check_rule(folder, "ray-same-image", {"cluster.yaml": manifest})
    assert_found(found, expected, "ray-same-image")


def test_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)
    flagged = files_flagged(ray_same_image, Path("."))
    assert "aws-dlc/samples-raytrain-raycluster.yaml" not in flagged  # one ${DLC_IMAGE} for all
    assert "kuberay/ray-job.pytorch-image-classifier.yaml" in flagged  # ray:2.46.0 head, ray-ml workers
