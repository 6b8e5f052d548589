"""The cluster's API as `pinguard run` uses it: the context's namespace, each call's failure said as what was tried.

The API server is `testing.fake_kube.FakeKube` on loopback; the `kubernetes` client and its HTTP are the real ones.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.launch.cluster import Kube, connect
from pinguard.launch.render import Job
from testing.fake_kube import FakeKube

IMAGE = "rayproject/ray:2.9.0@sha256:" + "a" * 64
RAYJOB = Job({"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "train"},
              "spec": {"entrypoint": "python train.py", "rayClusterSpec": {
                  "headGroupSpec": {"template": {"spec": {"containers": [{"name": "ray-head", "image": IMAGE}]}}},
                  "workerGroupSpecs": [{"replicas": 2, "template": {
                      "spec": {"containers": [{"name": "ray-worker", "image": IMAGE}]}}}]}}})


@pytest.fixture
def fake() -> Iterator[FakeKube]:
    with FakeKube() as started:
        yield started


@pytest.fixture
def kube(fake: FakeKube, tmp_path: Path) -> Kube:
    return connect({"KUBECONFIG": str(fake.write_kubeconfig(tmp_path / "kubeconfig", namespace="team"))})


def test_the_current_context_names_the_server_and_the_namespace(fake: FakeKube, kube: Kube) -> None:
    assert (kube.host, kube.namespace) == (fake.url, "team")
    assert [request.path for request in fake.requests] == ["/version/"]  # asked once, to fail early


def test_an_object_is_created_read_and_deleted_and_its_pods_listed(fake: FakeKube, kube: Kube) -> None:
    created = kube.create(RAYJOB, "team")
    assert created["metadata"]["name"] == "train" and fake.posted("rayjobs") == [RAYJOB.body]
    assert kube.get(RAYJOB, "team", "train")["kind"] == "RayJob"
    cluster = next(iter(kube.pods("team")))["metadata"]["labels"]["ray.io/cluster"]
    pods = kube.pods("team", f"ray.io/cluster={cluster}")
    assert len(pods) == 3 and all(pod["spec"]["containers"][0]["image"] == IMAGE for pod in pods)
    assert kube.pods("elsewhere") == [] and len(kube.pods(None)) == 3
    kube.delete(RAYJOB, "team", "train")
    assert fake.deleted == [("rayjobs", "team", "train")]


def test_a_failed_call_says_what_was_tried_and_what_the_server_answered(kube: Kube) -> None:
    with pytest.raises(PinguardError, match=r"^reading RayJob team/gone: 404 Not Found"):
        kube.get(RAYJOB, "team", "gone")


def test_no_configuration_or_no_server_is_a_clear_error(fake: FakeKube, tmp_path: Path) -> None:
    with pytest.raises(PinguardError, match=r"^no Kubernetes configuration \(.*missing, nor in-cluster\): "):
        connect({"KUBECONFIG": str(tmp_path / "missing")})
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
    fake.__exit__(None, None, None)  # the server goes away
    with pytest.raises(PinguardError, match=f"^reaching the Kubernetes API server at {fake.url}: no answer: "):
        connect({"KUBECONFIG": str(kubeconfig)})
