"""The in-job guards: NCCL's transport from its debug output, and the pod's own imageID.

`check_own_image` is tested against `testing.fake_kube.FakeKube`, a FAKE API server over
plain HTTP on loopback: no real API server can run here.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.launch.guards import (
    EFA,
    SOCKETS,
    UNKNOWN,
    GuardError,
    ImageMismatch,
    TransportFallback,
    check_nccl_transport,
    check_own_image,
    classify_nccl,
)
from testing.fake_kube import FakeKube, image_id_for, pod

# NCCL_DEBUG=INFO lines in the shapes NCCL 2.x and aws-ofi-nccl print them (host names and addresses made up).
EFA_LOG = """\
gpu-worker-0:512:598 [0] NCCL INFO Bootstrap : Using eth0:10.0.12.34<0>
gpu-worker-0:512:598 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.13.2-aws
gpu-worker-0:512:598 [0] NCCL INFO NET/OFI Using Libfabric version 1.22
gpu-worker-0:512:598 [0] NCCL INFO NET/OFI Selected Provider is efa (found 1 nics)
gpu-worker-0:512:598 [0] NCCL INFO Using network Libfabric
gpu-worker-0:512:602 [0] NCCL INFO Channel 00/0 : 3[3] -> 4[0] [send] via NET/Libfabric/0
"""
EFA_OLD_PLUGIN_LOG = """\
gpu-worker-1:77:140 [3] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 1 nics)
gpu-worker-1:77:140 [3] NCCL INFO Using network AWS Libfabric
"""
SOCKET_LOG = """\
gpu-worker-0:512:598 [0] NCCL INFO Bootstrap : Using eth0:10.0.12.34<0>
gpu-worker-0:512:598 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.
gpu-worker-0:512:598 [0] NCCL INFO NET/IB : No device found.
gpu-worker-0:512:598 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.12.34<0>
gpu-worker-0:512:598 [0] NCCL INFO Using network Socket
"""
OFI_SOCKETS_LOG = """\
gpu-worker-1:77:140 [0] NCCL INFO NET/OFI Selected provider is sockets, fabric is 10.0.0.0/16 (found 1 nics)
"""
NO_NETWORK_LOG = """\
gpu-worker-0:512:598 [0] NCCL INFO cudaDriverVersion 12080
gpu-worker-0:512:598 [0] NCCL INFO Channel 00/02 : 0 1 2 3
gpu-worker-0:512:602 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/CUMEM
"""
DIGEST = "sha256:" + "a" * 64
IMAGE = f"public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1@{DIGEST}"


@pytest.mark.parametrize(
    ("text", "transport"),
    [
        (EFA_LOG, EFA),
        (EFA_OLD_PLUGIN_LOG, EFA),
        (SOCKET_LOG, SOCKETS),
        ("host:1:2 [0] NCCL INFO Using network Socket\n", SOCKETS),
        (OFI_SOCKETS_LOG, SOCKETS),
        (NO_NETWORK_LOG, UNKNOWN),
        ("", UNKNOWN),
        (EFA_LOG + SOCKET_LOG, SOCKETS),  # one rank on sockets slows all of them
    ],
    ids=["efa", "efa-old-plugin", "nccl-socket", "using-network-socket", "ofi-sockets", "none", "empty", "mixed"],
)
def test_classify_nccl(text: str, transport: str) -> None:
    assert classify_nccl(text) == transport


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    folder = tmp_path / "logs[1]"  # glob's own characters in the folder are taken literally
    folder.mkdir()
    return folder


def test_every_file_the_placeholders_can_name_is_read(logs: Path) -> None:
    (logs / "nccl-gpu-worker-0-512.log").write_text(EFA_LOG)
    (logs / "nccl-gpu-worker-1-77.log").write_text(SOCKET_LOG)
    (logs / "other.log").write_text(SOCKET_LOG)
    env = {"NCCL_DEBUG_FILE": str(logs / "nccl-%h-%p.log")}
    with pytest.raises(TransportFallback, match=r"NCCL uses TCP sockets, not EFA .*nccl-gpu-worker-1-77\.log"):
        check_nccl_transport(require_efa=True, allow_tcp_fallback=False, env=env)
    assert check_nccl_transport(require_efa=True, allow_tcp_fallback=True, env=env) == SOCKETS
    assert check_nccl_transport(require_efa=False, allow_tcp_fallback=False, env=env) == SOCKETS
    (logs / "nccl-gpu-worker-1-77.log").write_text(EFA_OLD_PLUGIN_LOG)
    assert check_nccl_transport(require_efa=True, allow_tcp_fallback=False, env=env) == EFA


def test_a_fixed_file_name_and_no_file_at_all(logs: Path) -> None:
    (logs / "nccl.log").write_text(SOCKET_LOG)
    assert check_nccl_transport(False, False, env={"NCCL_DEBUG_FILE": str(logs / "nccl.log")}) == SOCKETS
    assert check_nccl_transport(True, False, env={"NCCL_DEBUG_FILE": str(logs / "none-%p.log")}) == UNKNOWN
    assert check_nccl_transport(True, False, env={}) == UNKNOWN


@pytest.fixture
def api(tmp_path: Path) -> Iterator[FakeKube]:
    with FakeKube() as fake:
        fake.add_pod(pod("team", "qwen-head", [
            ("ray-head", IMAGE, image_id_for(IMAGE, docker=True)),
            ("log-shipper", "fluent/fluent-bit:3.1", image_id_for("fluent/fluent-bit:3.1")),
        ]))
        fake.add_pod(pod("team", "qwen-worker", [("ray-worker", IMAGE, image_id_for(IMAGE, "sha256:" + "f" * 64))]))
        (tmp_path / "token").write_text("pod-token\n")
        yield fake


def _env(pod_name: str, **extra: str) -> dict[str, str]:
    return {"KUBERNETES_SERVICE_HOST": "10.100.0.1", "PINGUARD_EXPECTED_DIGEST": DIGEST, "POD_NAME": pod_name,
            "POD_NAMESPACE": "team", **extra}


def test_own_image_matches(api: FakeKube, tmp_path: Path) -> None:
    env = _env("qwen-head", PINGUARD_CONTAINER="ray-head")
    assert check_own_image(env, api_url=api.url, token_file=tmp_path / "token", ca_file=None) == DIGEST
    [request] = api.requests
    assert request.path == "/api/v1/namespaces/team/pods/qwen-head"
    assert request.headers["Authorization"] == "Bearer pod-token"


def test_without_a_container_name_the_containers_pinned_to_the_digest_are_judged(api: FakeKube,
                                                                                 tmp_path: Path) -> None:
    # The sidecar runs another image and is none of this check's business.
    assert check_own_image(_env("qwen-head"), api_url=api.url, token_file=tmp_path / "token", ca_file=None) == DIGEST


@pytest.mark.parametrize("container", ["ray-worker", None])
def test_own_image_mismatch(api: FakeKube, tmp_path: Path, container: str | None) -> None:
    env = _env("qwen-worker", **({"PINGUARD_CONTAINER": container} if container else {}))
    with pytest.raises(ImageMismatch, match=f"team/qwen-worker, container ray-worker: .* should run {DIGEST}, but "
                                            "runs public.ecr.aws/deep-learning-containers/ray@sha256:f{64}"):
        check_own_image(env, api_url=api.url, token_file=tmp_path / "token", ca_file=None)


def test_a_container_the_pod_does_not_have(api: FakeKube, tmp_path: Path) -> None:
    with pytest.raises(ImageMismatch, match="pod team/qwen-head reports no container trainer"):
        check_own_image(_env("qwen-head", PINGUARD_CONTAINER="trainer"), api_url=api.url,
                        token_file=tmp_path / "token", ca_file=None)


def test_a_pod_that_cannot_be_read(api: FakeKube, tmp_path: Path) -> None:
    with pytest.raises(GuardError, match=r"cannot read pod team/gone: HTTP 404 .*training/rbac.yaml"):
        check_own_image(_env("gone"), api_url=api.url, token_file=tmp_path / "token", ca_file=None)


def test_outside_a_pod_nothing_is_checked(api: FakeKube, tmp_path: Path) -> None:
    for env in ({"PINGUARD_EXPECTED_DIGEST": DIGEST}, {"KUBERNETES_SERVICE_HOST": "10.100.0.1"}):
        assert check_own_image(env, api_url=api.url, token_file=tmp_path / "token", ca_file=None) is None
    assert api.requests == []


def test_guards_runs_as_a_lone_file_on_the_standard_library(tmp_path: Path) -> None:
    """As it ships next to train.py in the ConfigMap: no pinguard, no site-packages."""
    shutil.copy(Path(__file__).resolve().parents[2] / "pinguard" / "launch" / "guards.py", tmp_path / "guards.py")
    code = "import guards, sys; print(guards.classify_nccl('NET/OFI Selected provider is efa'))"
    result = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, '.'); {code}"],
                            cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stdout == "efa\n"
