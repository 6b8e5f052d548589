"""`pinguard audit` through the real `kubernetes` client, against `testing.fake_kube.FakeKube`.

The fake is a FAKE API server on loopback (no real one can run here); the pods it
serves are programmed by each test.
"""
from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="needs the k8s extra: pip install 'pinguard[k8s]'")

from pinguard.admission import keepalive
from pinguard.admission.export import read_source
from pinguard.cli import main
from pinguard.launch.cluster import Kube, admit_only_the_lock, connect
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from testing.fake_kube import FakeKube, image_id_for, pod
from testing.lockdata import lock_for, locked_test_digest

RAY = "public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1"
RAY_DIGEST = locked_test_digest("public.ecr.aws/deep-learning-containers/ray", "train-ml-cuda-v1.1")
OTHER = "sha256:" + "e" * 64


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKube]:
    """team: a pod on the locked digest, one on a digest the lock does not hold, one never pinned; clean: one good."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(f"kind: Pod\nspec:\n  containers:\n  - name: ray\n    image: {RAY}\n")
    lockfile.write(tmp_path / "pinguard.lock", lock_for(scan_paths(["pod.yaml"]).found))
    pinned = f"{RAY}@{RAY_DIGEST}"
    with FakeKube() as server:
        server.write_kubeconfig(tmp_path / "kubeconfig", namespace="team")
        server.add_pod(pod("team", "good", [("ray-head", pinned, image_id_for(pinned, docker=True))]))
        server.add_pod(pod("team", "rebuilt", [("ray-worker", pinned, image_id_for(pinned, OTHER))]))
        server.add_pod(pod("team", "loose", [("web", "nginx:1.25", image_id_for("nginx:1.25"))]))
        server.add_pod(pod("clean", "good", [("ray-head", pinned, image_id_for(pinned))]))
        yield server


def _audit(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["audit", *args], env={"KUBECONFIG": "kubeconfig"}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_reports_an_unlocked_digest_and_an_unpinned_image(fake: FakeKube) -> None:
    status, out, err = _audit()  # the context's namespace: team
    assert status == 1, err
    nginx = image_id_for("nginx:1.25")
    assert out.splitlines() == [
        "team/loose container web: image `nginx:1.25` is not pinned to a digest [unpinned]",
        f"team/loose container web: image `nginx:1.25` runs {nginx}; the lock has no entry for it [not-locked]",
        f"team/rebuilt container ray-worker: image `{RAY}@{RAY_DIGEST}` runs "
        f"public.ecr.aws/deep-learning-containers/ray@{OTHER}; the lock holds {RAY_DIGEST} [not-locked]",
        "3 problems; checked 3 containers in 3 pods (namespace team)",
    ]
    assert [r.path for r in fake.requests if "pods" in r.path] == ["/api/v1/namespaces/team/pods"]


def test_a_clean_namespace_exits_0(fake: FakeKube) -> None:
    assert _audit("--namespace", "clean") == (0, "0 problems; checked 1 container in 1 pod (namespace clean)\n", "")


def test_all_namespaces_as_json(fake: FakeKube) -> None:
    status, out, _ = _audit("--all-namespaces", "--format", "json")
    report = json.loads(out)
    assert status == 1
    assert report["summary"] == {"pods": 4, "containers": 4, "reported": 3, "allowed": 0}
    assert {(c["namespace"], c["pod"], c["problem"]) for c in report["containers"]} == {
        ("team", "loose", "unpinned"), ("team", "loose", "not-locked"), ("team", "rebuilt", "not-locked")}
    assert report["containers"][-1]["image_id"] == f"public.ecr.aws/deep-learning-containers/ray@{OTHER}"
    assert [r.path for r in fake.requests if "pods" in r.path] == ["/api/v1/pods"]


def test_namespace_and_all_namespaces_exclude_each_other(fake: FakeKube) -> None:
    with pytest.raises(SystemExit) as stopped:
        _audit("--namespace", "team", "--all-namespaces")
    assert stopped.value.code == 2


PROXY = "docker.io/istio/proxyv2:1.22.0"


@pytest.fixture
def meshed(fake: FakeKube) -> FakeKube:
    """mesh: a pod on the locked digest with a service-mesh proxy injected beside it."""
    pinned = f"{RAY}@{RAY_DIGEST}"
    fake.add_pod(pod("mesh", "meshed", [("ray-head", pinned, image_id_for(pinned)),
                                        ("istio-proxy", PROXY, image_id_for(PROXY))]))
    return fake


def test_a_sidecar_is_a_problem_until_the_policy_allows_it(meshed: FakeKube) -> None:
    status, out, _ = _audit("--namespace", "mesh")
    assert status == 1
    assert [line.rsplit(" [", 1)[-1] for line in out.splitlines()[:-1]] == ["unpinned]", "not-locked]"]
    Path(".pinguard.yaml").write_text('sidecars:\n  - {name: istio-proxy, image: "docker.io/istio/proxyv2:*"}\n')
    status, out, _ = _audit("--namespace", "mesh")
    assert status == 0
    assert out.splitlines() == [
        'mesh/meshed container istio-proxy: allowed by policy (sidecars entry {name: "istio-proxy", image: '
        f'"docker.io/istio/proxyv2:*"}}): image `{PROXY}` runs {image_id_for(PROXY)}, which the lock does not '
        "vouch for [allowed-sidecar]",
        "0 problems, 1 sidecar allowed by policy; checked 2 containers in 1 pod (namespace mesh)",
    ]


def test_allowed_sidecars_are_listed_apart_in_json(meshed: FakeKube) -> None:
    Path(".pinguard.yaml").write_text("sidecars:\n  - {name: istio-proxy}\n")
    status, out, _ = _audit("--all-namespaces", "--format", "json")
    report = json.loads(out)
    assert status == 1  # team's problems remain
    assert report["summary"] == {"pods": 5, "containers": 6, "reported": 3, "allowed": 1}
    assert [(c["pod"], c["container"], c["problem"]) for c in report["allowed"]] == [
        ("meshed", "istio-proxy", "allowed-sidecar")]


def test_an_invalid_policy_is_a_usage_error_before_the_cluster_is_reached(meshed: FakeKube) -> None:
    Path(".pinguard.yaml").write_text("sidecars:\n  - {}\n")
    status, out, err = _audit()
    assert (status, out) == (2, "") and "sidecars[0]: needs `name`, `image` or both" in err
    assert meshed.requests == []


# --- pinguard's admission bindings: params missing, the keepalive gone ---

def _admitted(namespace: str = "team") -> Kube:
    """The lock's admission objects for `namespace` applied as `run --admission` applies them."""
    kube = connect({"KUBECONFIG": "kubeconfig"})
    admit_only_the_lock(kube, read_source(Path("pinguard.lock")), namespace, lambda _line: None)
    return kube


def test_bindings_whose_params_are_gone_are_reported(fake: FakeKube) -> None:
    _admitted().remove("ConfigMap", "pinguard-lock.team", "kube-system")
    status, out, _ = _audit("--namespace", "clean")
    bindings = sorted(name for plural, _, name in fake.applied if plural == "validatingadmissionpolicybindings"
                      and name != keepalive.NAME)
    assert status == 1 and len(bindings) == 8
    assert out.splitlines() == [
        *(f"ValidatingAdmissionPolicyBinding {name}: its params, ConfigMap kube-system/pinguard-lock.team, do not "
          "exist: every pod it matches is denied; apply its export again [admission-params]" for name in bindings),
        "8 problems; checked 1 container in 1 pod and 9 admission bindings (namespace clean)"]
    reads = [r.bare_path for r in fake.requests if r.method == "GET" and "/configmaps/" in r.bare_path]
    assert reads == ["/api/v1/namespaces/kube-system/configmaps/pinguard-lock.team"]  # once, not once a binding


def test_pinguard_bindings_without_the_keepalive_are_reported(fake: FakeKube) -> None:
    _admitted().remove("ValidatingAdmissionPolicyBinding", keepalive.NAME)
    status, out, _ = _audit("--namespace", "clean", "--format", "json")
    report = json.loads(out)
    assert status == 1 and report["summary"]["reported"] == 1
    assert report["admission"]["bindings"] == 8
    assert [(p["binding"], p["problem"]) for p in report["admission"]["problems"]] == [
        (keepalive.NAME, "admission-keepalive")]
    assert "Kubernetes #130887" in report["admission"]["problems"][0]["message"]


def test_a_whole_export_is_no_problem(fake: FakeKube) -> None:
    _admitted()
    assert _audit("--namespace", "clean") == (
        0, "0 problems; checked 1 container in 1 pod and 9 admission bindings (namespace clean)\n", "")


def test_bindings_rbac_will_not_list_are_said_once_and_the_pods_audited(fake: FakeKube, tmp_path: Path) -> None:
    with FakeKube(forbidden=["validatingadmissionpolicybindings"]) as server:  # in place of `fake`
        server.write_kubeconfig(tmp_path / "kubeconfig", namespace="team")
        pinned = f"{RAY}@{RAY_DIGEST}"
        server.add_pod(pod("team", "good", [("ray-head", pinned, image_id_for(pinned))]))
        status, out, err = _audit()
    assert (status, out) == (0, "0 problems; checked 1 container in 1 pod (namespace team)\n")
    assert err.splitlines() == [
        "pinguard: admission bindings not checked: listing validatingadmissionpolicybindings: 403 Forbidden: "
        "validatingadmissionpolicybindings.admissionregistration.k8s.io is forbidden: User "
        '"system:serviceaccount:team:auditor" cannot list resource "validatingadmissionpolicybindings" in API group '
        '"admissionregistration.k8s.io" at the cluster scope']
