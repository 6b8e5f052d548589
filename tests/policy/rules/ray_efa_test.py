"""ray-efa as a truth table: Ray manifest in, findings (line, column, message part) out."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pinguard.policy.rules import ray_efa
from tests.conftest import CORPUS
from tests.policy.helpers import assert_found, check_rule, files_flagged

EFA_ENV = "[{name: FI_PROVIDER, value: efa}, {name: NCCL_SOCKET_IFNAME, value: eth0}]"
EFA_RESOURCES = "{limits: {nvidia.com/gpu: 4, vpc.amazonaws.com/efa: 1}}"
GPU_ONLY = "{limits: {nvidia.com/gpu: 4}}"
CONTAINER = (15, 15)  # the worker container's `name` key


def cluster(counts: str = "replicas: 2", env: str = EFA_ENV, resources: str = EFA_RESOURCES, extra: str = "",
            header: str = "kind: RayCluster\nspec:\n") -> str:
    """A RayCluster (or, with `header`, another kind); a RayCluster's worker container is on line 15."""
    nest = "  " * (header.count("\n") - 1)  # the cluster spec sits under the header's last key
    body = f"""\
headGroupSpec:
  template:
    spec:
      containers:
        - {{name: ray-head, image: rayproject/ray:2.40.0}}
workerGroupSpecs:
  - groupName: gpu-workers
    {counts}
    template:
      spec:
        containers:
          - name: ray-worker
            env: {env}
            resources: {resources}
            {extra}
"""
    lines = header.splitlines()
    return "\n".join(["apiVersion: ray.io/v1", *lines, *(f"{nest}{line}" for line in body.splitlines())]) + "\n"


# The AWS sample (samples-raytrain-raycluster.yaml), trimmed: 2 workers of 4 GPUs, each with one EFA interface.
AWS_SAMPLE = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: ${RAY_CLUSTER_NAME}
spec:
  rayVersion: "${RAY_VERSION}"
  headGroupSpec:
    rayStartParams: {dashboard-host: "0.0.0.0", num-gpus: "0"}
    template:
      spec:
        containers:
          - name: ray-head
            image: "${DLC_IMAGE}"
            env:
              - { name: NVIDIA_VISIBLE_DEVICES, value: "void" }
            resources:
              limits:   { cpu: "4", memory: 16Gi }
  workerGroupSpecs:
    - groupName: gpu-workers
      replicas: 2
      minReplicas: 2
      maxReplicas: 2
      rayStartParams:
        num-gpus: "${GPUS_PER_NODE}"
      template:
        spec:
          containers:
            - name: ray-worker
              image: "${DLC_IMAGE}"
              env:
                - { name: NCCL_SOCKET_IFNAME, value: "eth0" }
                - { name: FI_PROVIDER, value: "efa" }
                - { name: NCCL_NET_PLUGIN, value: "ofi" }
              resources:
                limits:   { nvidia.com/gpu: "${GPUS_PER_NODE}", vpc.amazonaws.com/efa: "1", cpu: "40" }
                requests: { nvidia.com/gpu: "${GPUS_PER_NODE}", vpc.amazonaws.com/efa: "1", cpu: "40" }
"""
AWS_SAMPLE_WITHOUT_EFA = "".join(
    line for line in AWS_SAMPLE.splitlines(keepends=True) if "NCCL_SOCKET_IFNAME" not in line
    and "FI_PROVIDER" not in line).replace('vpc.amazonaws.com/efa: "1", ', "")

MISSING_ALL = [(*CONTAINER, "does not request vpc.amazonaws.com/efa: add `vpc.amazonaws.com/efa: 1`"),
               (*CONTAINER, "does not set FI_PROVIDER: add `- {name: FI_PROVIDER, value: efa}` to its env"),
               (*CONTAINER, "does not set NCCL_SOCKET_IFNAME: add `- {name: NCCL_SOCKET_IFNAME, value: eth0}`")]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("manifest", "conf", "expected"),
    [
        # multi-node GPU groups with everything set
        (cluster(), {}, []),
        (AWS_SAMPLE, {}, []),
        (cluster(resources="{requests: {nvidia.com/gpu: 4, vpc.amazonaws.com/efa: 1}}"), {}, []),
        (cluster(env="[{name: FI_PROVIDER, value: EFA}, {name: NCCL_SOCKET_IFNAME, value: eth0}]"), {}, []),
        (cluster(env="[{name: FI_PROVIDER, value: efa}, {name: NCCL_SOCKET_IFNAME, valueFrom: {x: y}}]"), {}, []),
        (cluster(env="[{name: FI_PROVIDER, value: '${P}'}, {name: NCCL_SOCKET_IFNAME, value: eth0}]"), {}, []),
        # ... and with some of it missing
        (AWS_SAMPLE_WITHOUT_EFA, {},
         [(28, 15, "`ray-worker` of worker group `gpu-workers` uses GPUs on several nodes but does not request "
                   "vpc.amazonaws.com/efa"),
          (28, 15, "does not set FI_PROVIDER"),
          (28, 15, "does not set NCCL_SOCKET_IFNAME")]),
        (cluster(env="[]", resources=GPU_ONLY), {}, MISSING_ALL),
        (cluster(env="[{name: NCCL_SOCKET_IFNAME, value: eth0}]"), {},
         [(*CONTAINER, "otherwise NCCL falls back to TCP sockets silently and the job runs at half speed")]),
        (cluster(resources=GPU_ONLY), {}, [(*CONTAINER, "does not request vpc.amazonaws.com/efa")]),
        (cluster(resources="{limits: {nvidia.com/gpu: 4, vpc.amazonaws.com/efa: 0}}"), {},
         [(*CONTAINER, "does not request vpc.amazonaws.com/efa")]),
        (cluster(env="[{name: FI_PROVIDER, value: tcp}, {name: NCCL_SOCKET_IFNAME, value: eth0}]"), {},
         [(16, 48, "sets FI_PROVIDER to `tcp`: set it to `efa`")]),
        (cluster(env="[{name: FI_PROVIDER, value: efa}]", extra="envFrom: [{configMapRef: {name: nccl}}]"), {},
         [(*CONTAINER, "does not set NCCL_SOCKET_IFNAME (`envFrom` may set it, but this check cannot see that): add")]),
        # what counts as several nodes: replicas, else minReplicas; maxReplicas; numOfHosts; a template
        (cluster(counts="replicas: 1", env="[]", resources=GPU_ONLY), {}, []),
        (cluster(counts="minReplicas: 1", env="[]", resources=GPU_ONLY), {}, []),
        (cluster(counts="minReplicas: 3", env="[]", resources=GPU_ONLY), {}, MISSING_ALL),
        (cluster(counts="<<: {replicas: 1, minReplicas: 3}", env="[]", resources=GPU_ONLY), {}, []),
        (cluster(counts="<<: {replicas: 1, maxReplicas: 4}", env="[]", resources=GPU_ONLY), {}, MISSING_ALL),
        (cluster(counts="numOfHosts: 2", env="[]", resources=GPU_ONLY), {}, MISSING_ALL),
        (cluster(counts="replicas: '${WORKERS}'", env="[]", resources=GPU_ONLY), {}, MISSING_ALL),
        # what counts as GPUs: limits or requests above zero, or a template
        (cluster(env="[]", resources="{limits: {cpu: 8}}"), {}, []),
        (cluster(env="[]", resources="{limits: {nvidia.com/gpu: 0}}"), {}, []),
        (cluster(env="[]", resources="{requests: {nvidia.com/gpu: '${GPUS}'}}"), {}, MISSING_ALL),
        # `require` drops an item, or adds one
        (cluster(env="[]", resources=GPU_ONLY), {"require": ["vpc.amazonaws.com/efa"]}, MISSING_ALL[:1]),
        (cluster(), {"require": ["FI_PROVIDER", "NCCL_NET_PLUGIN"]},
         [(*CONTAINER, "does not set NCCL_NET_PLUGIN: add `- {name: NCCL_NET_PLUGIN, value: VALUE}`")]),
    ],
)
def test_ray_efa(folder: Path, manifest: str, conf: dict[str, Any], expected: list[tuple[int, int, str]]) -> None:
    found = check_rule(folder, "ray-efa", {"cluster.yaml": manifest}, conf)
    assert_found(found, expected, "ray-efa")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("kind: RayJob\nspec:\n  rayClusterSpec:\n", [(16, 17)] * 3),
        ("kind: RayService\nspec:\n  rayClusterConfig:\n", [(16, 17)] * 3),
        ("kind: RayCronJob\nspec:\n  jobTemplate:\n    rayClusterSpec:\n", [(17, 19)] * 3),
        ("kind: RayJob\nspec:\n  notAClusterSpec:\n", []),
        ("kind: Deployment\nspec:\n  template:\n", []),
    ],
)
def test_the_ray_kinds(folder: Path, header: str, expected: list[tuple[int, int]]) -> None:
    found = check_rule(folder, "ray-efa", {"cluster.yaml": cluster(env="[]", resources=GPU_ONLY, header=header)})
    assert [(f.line, f.column) for f in found] == expected


def test_every_gpu_container_of_the_group_is_checked(folder: Path) -> None:
    sidecar = "            - {name: sidecar, resources: {limits: {nvidia.com/gpu: 1}}}\n"
    manifest = cluster(env="[]", resources=GPU_ONLY).rstrip() + "\n" + sidecar
    found = check_rule(folder, "ray-efa", {"cluster.yaml": manifest}, {"require": ["FI_PROVIDER"]})
    assert [(f.line, f.column) for f in found] == [CONTAINER, (18, 16)]
    assert "container `sidecar` of worker group `gpu-workers`" in found[1].message


def test_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)
    flagged = files_flagged(ray_efa, Path("."))
    assert "aws-dlc/samples-raytrain-raycluster.yaml" not in flagged  # the sample sets it all
    assert "aws-dlc/dlc-test-ray-llm-rayservice.yml" in flagged  # its workers set no NCCL_SOCKET_IFNAME
