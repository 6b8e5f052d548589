"""`pinguard run`: the gate, the rendered object, and submission and watching through the real `kubernetes` client.

No Kubernetes API server can run here: the cluster is `testing.fake_kube.FakeKube`, a
FAKE API server on loopback that plays KubeRay as each test programs it. The client,
its kubeconfig loading and its HTTP are the real ones.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from pinguard.admission import vap
from pinguard.admission.objects import Source
from pinguard.cli import main
from pinguard.commands.options import Options
from pinguard.commands.run import run
from pinguard.lock import lockfile
from pinguard.policy.load import for_command
from pinguard.scan.paths import scan_paths
from testing.fake_kube import APPLY_PATCH, FakeKube
from testing.fake_registry import FakeRegistry, Response, Route
from testing.lockdata import lock_for, locked_test_digest
from testing.server_side_apply import SERVER_SET
from tests.admission.helpers import admit

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "public.ecr.aws/deep-learning-containers/ray"
DIGEST = locked_test_digest(IMAGE, "train-ml-cuda-v1.1")
WRONG = "sha256:" + "b" * 64


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the training manifests with a lock for them, unpinned."""
    (tmp_path / "training").mkdir()
    for name in ("rayjob.yaml", "raycluster.yaml"):
        shutil.copy(ROOT / "training" / name, tmp_path / "training" / name)
    monkeypatch.chdir(tmp_path)
    lockfile.write(tmp_path / "pinguard.lock", lock_for(scan_paths(["training"]).found))
    return tmp_path


@pytest.fixture
def pinned(project: Path) -> Path:
    assert main(["pin", "training"], env={}, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    return project


def _main(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), env=env or {}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _launch(fake: FakeKube, manifest: str, *, env: dict[str, str] | None = None, policies: Sequence[Path] = (),
            **kwargs: Any) -> tuple[int, str, str]:
    """`run` as the command line calls it (its policy: those named, else the `aws-dlc` preset), polling fast,
    against the fake through a kubeconfig."""
    out, err = io.StringIO(), io.StringIO()
    kubeconfig = fake.write_kubeconfig(Path("kubeconfig"), namespace="team")
    options = Options(stdout=out, stderr=err, env={"KUBECONFIG": str(kubeconfig), **(env or {})})
    status = run(manifest, options, for_command(policies, "aws-dlc", project=False), poll=0.01, **kwargs)
    return status, out.getvalue(), err.getvalue()


def _containers(body: dict[str, Any]) -> list[dict[str, Any]]:
    spec = body["spec"].get("rayClusterSpec") or body["spec"]
    groups = [spec["headGroupSpec"], *spec["workerGroupSpecs"]]
    return [c for g in groups for c in g["template"]["spec"]["containers"]]


def test_unpinned_manifest_is_refused_and_nothing_reaches_the_cluster(project: Path) -> None:
    with FakeKube() as fake:
        kubeconfig = fake.write_kubeconfig(project / "kubeconfig")
        status, out, err = _main("run", "training/rayjob.yaml", env={"KUBECONFIG": str(kubeconfig)})
        assert fake.requests == []
    assert status == 1
    assert f"training/rayjob.yaml:38:22: error: `{IMAGE}:train-ml-cuda-v1.1` has no digest" in out
    assert out.endswith("2 errors, 2 warnings\n")
    assert "refused: nothing was launched" in err


def test_templated_image_is_refused_whatever_the_policy_says(pinned: Path) -> None:
    manifest = pinned / "training" / "rayjob.yaml"
    manifest.write_text(manifest.read_text().replace(f"{IMAGE}:train-ml-cuda-v1.1@{DIGEST}", "${IMAGE}", 1))
    status, out, _ = _main("run", "--dry-run", "training/rayjob.yaml")
    assert status == 1 and "error:" in out and "[templated]" in out


def test_dry_run_prints_the_object_with_digests_annotations_and_env(pinned: Path) -> None:
    status, out, err = _main("run", "--dry-run", "--namespace", "team", "training/rayjob.yaml")
    assert status == 0, err
    body = yaml.safe_load(out)
    lock_sha = hashlib.sha256((pinned / "pinguard.lock").read_bytes()).hexdigest()
    assert body["kind"] == "RayJob" and body["metadata"]["namespace"] == "team"
    assert body["metadata"]["annotations"]["pinguard.dev/lock-sha256"] == lock_sha
    assert body["metadata"]["annotations"]["pinguard.dev/expected-image"] == f"{IMAGE}:train-ml-cuda-v1.1@{DIGEST}"
    assert yaml.safe_load(body["spec"]["runtimeEnvYAML"]) == {"pip": ["transformers==5.24.0"]}
    for container in _containers(body):
        assert container["image"] == f"{IMAGE}:train-ml-cuda-v1.1@{DIGEST}"
        env = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
        assert env["PINGUARD_EXPECTED_DIGEST"] == DIGEST and env["PINGUARD_LOCK_SHA256"] == lock_sha
        assert env["PINGUARD_CONTAINER"] == container["name"]
        assert env["POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}
        assert env["POD_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    worker_env = {e["name"]: e.get("value") for e in _containers(body)[1]["env"]}
    assert worker_env["FI_PROVIDER"] == "efa" and worker_env["NCCL_DEBUG_FILE"] == "/tmp/nccl-%h-%p.log"
    template = body["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]
    assert template["metadata"]["annotations"]["pinguard.dev/lock-sha256"] == lock_sha


def test_dry_run_pins_from_the_lock_and_leaves_the_file_alone(project: Path) -> None:
    (project / ".pinguard.yaml").write_text("extends: aws-dlc\nrules: {unpinned: 'off'}\n")
    before = (project / "training" / "rayjob.yaml").read_bytes()
    status, out, _ = _main("run", "--dry-run", "--policy", ".pinguard.yaml", "training/rayjob.yaml")
    assert status == 0
    assert f"image: {IMAGE}:train-ml-cuda-v1.1@{DIGEST}" in out
    assert (project / "training" / "rayjob.yaml").read_bytes() == before


def test_the_pinguard_env_replaces_what_the_manifest_set(pinned: Path) -> None:
    manifest = pinned / "training" / "rayjob.yaml"
    setting = '- { name: NCCL_SOCKET_IFNAME, value: "eth0" }'
    manifest.write_text(manifest.read_text().replace(
        setting, setting + "\n                  - { name: PINGUARD_EXPECTED_DIGEST, value: x }"))
    worker = _containers(yaml.safe_load(_main("run", "--dry-run", "training/rayjob.yaml")[1]))[1]
    assert [e.get("value") for e in worker["env"] if e["name"] == "PINGUARD_EXPECTED_DIGEST"] == [DIGEST]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda text: text + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
         "launches one ray.io RayJob or RayCluster, found RayJob, ConfigMap"),
        (lambda text: text.replace("  name: qwen-fsdp\n", "  name: qwen-fsdp\n  namespace: other\n"),
         "the manifest's namespace other is not --namespace team"),
    ],
)
def test_what_run_cannot_launch_is_a_usage_error(pinned: Path, change: Any, message: str) -> None:
    manifest = pinned / "training" / "rayjob.yaml"
    manifest.write_text(change(manifest.read_text()))
    status, out, err = _main("run", "--dry-run", "--namespace", "team", "training/rayjob.yaml")
    assert (status, out) == (2, "") and message in err


def test_submitted_when_pinned_and_every_pod_runs_the_locked_digest(pinned: Path) -> None:
    with FakeKube(cluster_after=2, finish_after=4) as fake:
        status, out, err = _launch(fake, "training/rayjob.yaml")
        posted = fake.posted("rayjobs")
        requests = fake.requests
    assert status == 0, err
    assert len(posted) == 1
    body = posted[0]
    assert body["metadata"]["namespace"] == "team"  # the kubeconfig context's
    assert body["metadata"]["annotations"]["pinguard.dev/lock-sha256"] == hashlib.sha256(
        (pinned / "pinguard.lock").read_bytes()).hexdigest()
    assert {c["image"] for c in _containers(body)} == {f"{IMAGE}:train-ml-cuda-v1.1@{DIGEST}"}
    assert all(r.headers.get("Authorization") == "Bearer fake-token" for r in requests)
    assert next(r.path for r in requests if "/pods" in r.path) == (
        "/api/v1/namespaces/team/pods?labelSelector=ray.io%2Fcluster%3Dqwen-fsdp-raycluster-fake")
    assert "created RayJob team/qwen-fsdp" in out
    assert f"pod qwen-fsdp-raycluster-fake-head: ray-head runs {DIGEST} (locked)" in out
    assert "RayJob team/qwen-fsdp SUCCEEDED; 4 pods ran the locked images" in out  # the submitter's too
    assert fake.deleted == []


def test_a_pod_on_another_digest_stops_the_job_with_the_evidence(pinned: Path) -> None:
    with FakeKube(wrong_digests={2: WRONG}) as fake:
        status, _, err = _launch(fake, "training/rayjob.yaml")
        deleted = fake.deleted
        methods = [r.method for r in fake.requests]
    assert status == 1
    assert deleted == [("rayjobs", "team", "qwen-fsdp")] and methods.count("DELETE") == 1
    assert (f"pinguard: team/qwen-fsdp-raycluster-fake-gpu-workers-worker-1 container ray-worker: image "
            f"`{IMAGE}:train-ml-cuda-v1.1@{DIGEST}` runs {IMAGE}@{WRONG}; the lock holds {DIGEST} [not-locked]") in err
    assert "stopped: deleted RayJob team/qwen-fsdp" in err


def test_a_failed_job_exits_1(pinned: Path) -> None:
    with FakeKube(final_status="FAILED") as fake:
        status, _, err = _launch(fake, "training/rayjob.yaml")
    assert status == 1 and "RayJob team/qwen-fsdp ended FAILED" in err


def test_timeout_leaves_the_job_and_says_why(pinned: Path) -> None:
    with FakeKube(cluster_after=10**9) as fake:
        status, _, err = _launch(fake, "training/rayjob.yaml", watch_timeout=0.05)
        assert fake.deleted == []
    assert status == 1
    assert "timed out after 0.05 s: RayJob team/qwen-fsdp is not started, 0 of 4 pods confirmed" in err
    assert "is the KubeRay operator running?" in err and "kubectl delete rayjobs qwen-fsdp -n team" in err


def test_an_unreachable_api_server_is_a_clear_error(pinned: Path) -> None:
    with FakeKube() as fake:
        kubeconfig = fake.write_kubeconfig(pinned / "kubeconfig")
    status, _, err = _main("run", "training/rayjob.yaml", env={"KUBECONFIG": str(kubeconfig)})
    assert status == 2 and "reaching the Kubernetes API server at http://127.0.0.1:" in err and "Traceback" not in err


@dataclass
class Submitter:
    """Stands in for Ray's job submission API: records what is submitted, answers statuses in turn."""

    statuses: list[str]
    submitted: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = field(default_factory=list)

    def submit(self, address: str, entrypoint: str, runtime_env: dict[str, Any] | None,
               metadata: dict[str, str]) -> str:
        self.submitted.append((address, entrypoint, runtime_env, metadata))
        return "raysubmit_1"

    def status(self, address: str, job_id: str) -> str:
        assert (address, job_id) == (self.submitted[0][0], "raysubmit_1")
        return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]


def test_raycluster_gets_the_entrypoint_once_its_head_runs_the_locked_image(pinned: Path) -> None:
    submitter = Submitter(["PENDING", "RUNNING", "SUCCEEDED"])
    with FakeKube() as fake:
        status, out, err = _launch(fake, "training/raycluster.yaml", submitter=submitter)
        assert fake.deleted == [] and len(fake.posted("rayclusters")) == 1
    assert status == 0, err
    [(address, entrypoint, runtime_env, metadata)] = submitter.submitted
    assert address == "http://qwen-fsdp-head-svc.team.svc.cluster.local:8265"
    assert entrypoint == ("python /home/ray/train/train.py --model_id qwen2.5-1.5b --steps 5 --seq_len 128 "
                          "--batch_size 1 --num_workers 8 --require_efa")
    assert runtime_env == {"pip": ["transformers==5.24.0"]}
    assert metadata["pinguard.dev/expected-image"] == f"{IMAGE}:train-ml-cuda-v1.1@{DIGEST}"
    assert "submitted job raysubmit_1" in out and "RayCluster team/qwen-fsdp SUCCEEDED" in out
    assert "RayCluster team/qwen-fsdp is left running" in out


def test_raycluster_on_another_digest_is_deleted_before_anything_is_submitted(pinned: Path) -> None:
    submitter = Submitter(["SUCCEEDED"])
    with FakeKube(wrong_digests={0: WRONG}) as fake:
        status, _, err = _launch(fake, "training/raycluster.yaml", submitter=submitter,
                                 env={"RAY_ADDRESS": "http://127.0.0.1:8265"})
        assert fake.deleted == [("rayclusters", "team", "qwen-fsdp")]
    assert status == 1 and submitter.submitted == []
    assert f"qwen-fsdp-head container ray-head: image `{IMAGE}:train-ml-cuda-v1.1@{DIGEST}` runs " \
           f"docker-pullable://{IMAGE}@{WRONG}" in err


def test_local_runs_the_entrypoint_with_the_overrides_from_the_repository_root(
        pinned: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (pinned / "training" / "train.py").write_text(
        "import json, os, sys\n"
        "json.dump({'argv': sys.argv, 'cwd': os.getcwd()}, open('ran.json', 'w'))\n"
        "sys.exit(3)\n")
    (pinned / "elsewhere").mkdir()
    monkeypatch.chdir(pinned / "elsewhere")
    status, _, err = _main("run", "--local", "../training/rayjob.yaml", "--lockfile", "../pinguard.lock",
                           env={"PATH": os.environ["PATH"]})
    assert status == 3  # the program's own
    ran = json.loads((pinned / "ran.json").read_text())
    assert ran["cwd"] == str(pinned)
    *argv, storage_flag, storage = ran["argv"]
    assert argv == ["training/train.py", "--model_id", "qwen2.5-1.5b", "--steps", "5", "--seq_len", "128",
                    "--batch_size", "1", "--num_workers", "8", "--require_efa",
                    "--model_id", "tiny", "--num_workers", "2", "--cpu", "--steps", "5"]
    assert storage_flag == "--storage_path" and Path(storage).is_dir()  # a fresh run: nothing to resume
    assert "no container image is enforced locally" in err


def test_local_is_gated_too(project: Path) -> None:
    (project / "training" / "train.py").write_text("open('ran', 'w')\n")
    assert _main("run", "--local", "training/rayjob.yaml")[0] == 1
    assert not (project / "ran").exists()


def test_dry_run_imports_neither_the_kubernetes_client_nor_ray(pinned: Path) -> None:
    code = ("import sys; from pinguard.cli import main; status = main(['run', '--dry-run', 'training/rayjob.yaml'], "
            "env={}); print(status, sorted({m.split('.')[0] for m in sys.modules} & {'kubernetes', 'ray', 'torch', "
            "'requests'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.splitlines()[-1] == "0 []"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["training/missing.yaml"], "training/missing.yaml: no such file"),
        (["--lockfile", "none.lock", "training/rayjob.yaml"], "none.lock: no locked images: run `pinguard lock` first"),
        (["--watch-timeout", "0", "training/rayjob.yaml"], "--watch-timeout must be more than 0 seconds"),
    ],
)
def test_usage_errors_exit_2_before_anything_runs(pinned: Path, args: list[str], message: str) -> None:
    status, out, err = _main("run", "--dry-run", *args)
    assert (status, out) == (2, "") and message in err and "Traceback" not in err


def test_a_raycluster_without_an_entrypoint_is_refused_before_it_is_created(pinned: Path) -> None:
    manifest = pinned / "training" / "raycluster.yaml"
    manifest.write_text(manifest.read_text().replace("pinguard.dev/entrypoint:", "example.com/entrypoint:"))
    status, _, err = _main("run", "--dry-run", "training/raycluster.yaml")
    assert status == 2 and "RayCluster qwen-fsdp: no entrypoint: set the annotation pinguard.dev/entrypoint" in err


# --- What `run` watches besides the Ray cluster's pods: KubeRay's submitter pod, and injected sidecars ---

PROXY = "docker.io/istio/proxyv2:1.22.0"
HEAD = "qwen-fsdp-raycluster-fake-head"


def _submitter_pods(fake: FakeKube) -> list[dict[str, Any]]:
    return [p for p in fake.pods.values() if p["metadata"]["labels"].get("job-name") == "qwen-fsdp"]


def _mesh_policy(image: str = "docker.io/istio/proxyv2:*") -> Path:
    path = Path("mesh.yaml")
    path.write_text(f'extends: aws-dlc\nsidecars:\n  - {{name: istio-proxy, image: "{image}"}}\n')
    return path


def test_the_submitter_pod_of_k8s_job_mode_is_watched_though_it_carries_no_ray_cluster_label(pinned: Path) -> None:
    with FakeKube(cluster_after=2, finish_after=4) as fake:
        status, out, err = _launch(fake, "training/rayjob.yaml")
        [submitter] = _submitter_pods(fake)
        selectors = [r.query.get("labelSelector", [""])[0] for r in fake.requests if "/pods" in r.path]
    assert status == 0, err
    assert "ray.io/cluster" not in submitter["metadata"]["labels"]
    assert submitter["metadata"]["ownerReferences"][0]["kind"] == "Job" and submitter["status"]["phase"] == "Succeeded"
    assert "job-name=qwen-fsdp" in selectors
    name = submitter["metadata"]["name"]
    assert f"pod {name}: ray-job-submitter runs {DIGEST} (locked)" in out  # KubeRay's default: the head's image
    assert "RayJob team/qwen-fsdp SUCCEEDED; 4 pods ran the locked images" in out


def test_a_submitter_pod_on_another_digest_stops_the_job(pinned: Path) -> None:
    with FakeKube(wrong_digests={3: WRONG}) as fake:  # 0 the head, 1 and 2 the workers, 3 the submitter
        status, _, err = _launch(fake, "training/rayjob.yaml")
        [submitter] = _submitter_pods(fake)
        assert fake.deleted == [("rayjobs", "team", "qwen-fsdp")]
    assert status == 1
    assert (f"pinguard: team/{submitter['metadata']['name']} container ray-job-submitter: image "
            f"`{IMAGE}:train-ml-cuda-v1.1@{DIGEST}` runs {IMAGE}@{WRONG}; the lock holds {DIGEST} [not-locked]") in err


def test_a_submitter_pod_template_is_rendered_and_its_pod_judged(pinned: Path) -> None:
    manifest = pinned / "training" / "rayjob.yaml"
    manifest.write_text(manifest.read_text().replace("  rayClusterSpec:\n", (
        "  submitterPodTemplate:\n    metadata: {labels: {team: ml}}\n    spec:\n      restartPolicy: Never\n"
        f"      containers:\n        - {{name: submit, image: '{IMAGE}:train-ml-cuda-v1.1@{DIGEST}'}}\n"
        "  rayClusterSpec:\n"), 1))
    with FakeKube() as fake:
        status, out, err = _launch(fake, "training/rayjob.yaml")
        [submitter] = _submitter_pods(fake)
        template = fake.posted("rayjobs")[0]["spec"]["submitterPodTemplate"]
    assert status == 0, err
    assert submitter["metadata"]["labels"]["team"] == "ml"
    env = {e["name"]: e.get("value") for e in template["spec"]["containers"][0]["env"]}
    assert env["PINGUARD_CONTAINER"] == "submit" and env["PINGUARD_EXPECTED_DIGEST"] == DIGEST
    assert f"pod {submitter['metadata']['name']}: submit runs {DIGEST} (locked)" in out


def test_a_submitter_pod_seen_only_once_it_finished_still_counts(pinned: Path) -> None:
    with FakeKube(cluster_after=2, finish_after=2) as fake:
        status, out, err = _launch(fake, "training/rayjob.yaml")
    assert status == 0, err
    assert "4 pods ran the locked images" in out


@pytest.mark.parametrize("mode", ["HTTPMode", "InteractiveMode"])
def test_without_a_submitter_pod_none_is_expected_nor_looked_for(pinned: Path, mode: str) -> None:
    manifest = pinned / "training" / "rayjob.yaml"
    manifest.write_text(manifest.read_text().replace("submissionMode: K8sJobMode", f"submissionMode: {mode}"))
    with FakeKube() as fake:
        status, out, err = _launch(fake, "training/rayjob.yaml")
        assert _submitter_pods(fake) == []
        assert not [r for r in fake.requests if "job-name" in r.path]
    assert status == 0, err
    assert "RayJob team/qwen-fsdp SUCCEEDED; 3 pods ran the locked images" in out


def test_a_sidecar_injected_into_the_head_stops_the_job_without_a_policy_allowing_it(pinned: Path) -> None:
    with FakeKube(sidecars={0: [("istio-proxy", PROXY)]}) as fake:
        status, _, err = _launch(fake, "training/rayjob.yaml")
        assert fake.deleted == [("rayjobs", "team", "qwen-fsdp")]
    assert status == 1
    assert f"team/{HEAD} container istio-proxy: image `{PROXY}` is not pinned to a digest [unpinned]" in err
    assert (f"team/{HEAD} container istio-proxy: not in the manifest (injected into the pod?): lock its image, or "
            'allow it in the policy `run` uses (--policy FILE): `sidecars: [{name: "istio-proxy", image: '
            '"docker.io/istio/proxyv2:*"}]` [sidecar-not-allowed]') in err
    assert "stopped: deleted RayJob team/qwen-fsdp" in err


def test_a_sidecar_the_policy_allows_by_name_and_image_is_reported_not_confirmed(pinned: Path) -> None:
    with FakeKube(sidecars={0: [("istio-proxy", PROXY)]}) as fake:
        status, out, err = _launch(fake, "training/rayjob.yaml", policies=[_mesh_policy()])
        assert fake.deleted == []
    assert status == 0, err
    assert f"pod {HEAD}: ray-head runs {DIGEST} (locked)\n" in out  # the sidecar is not among the locked
    assert (f'team/{HEAD} container istio-proxy: allowed by policy (sidecars entry {{name: "istio-proxy", image: '
            f'"docker.io/istio/proxyv2:*"}}): image `{PROXY}` runs') in out
    assert "SUCCEEDED; 4 pods ran the locked images, besides 1 sidecar the policy allows" in out


def test_a_sidecar_allowed_by_name_with_another_image_stops_the_job(pinned: Path) -> None:
    with FakeKube(sidecars={0: [("istio-proxy", "docker.io/attacker/proxyv2:1.22.0")]}) as fake:
        status, _, err = _launch(fake, "training/rayjob.yaml", policies=[_mesh_policy()])
        assert fake.deleted == [("rayjobs", "team", "qwen-fsdp")]
    assert status == 1
    assert (f"team/{HEAD} container istio-proxy: not in the manifest, and the policy allows a sidecar named "
            "`istio-proxy` only with image `docker.io/istio/proxyv2:*` [sidecar-not-allowed]") in err


def test_a_policy_cannot_excuse_a_container_the_manifest_declares(pinned: Path) -> None:
    with FakeKube(wrong_digests={0: WRONG}) as fake:
        status, _, err = _launch(fake, "training/rayjob.yaml", policies=[_mesh_policy(f"{IMAGE}:*")])
        assert fake.deleted == [("rayjobs", "team", "qwen-fsdp")]
    assert status == 1 and f"{HEAD} container ray-head: image" in err and "[not-locked]" in err


# --- `run --admission`: the lock applied as a ValidatingAdmissionPolicy before the job ---

PLURALS = {"ConfigMap": "configmaps", **vap.PLURALS}


def _path(obj: dict[str, Any]) -> str:
    """Where server-side apply sends an object."""
    if obj["kind"] == "ConfigMap":
        return f"/api/v1/namespaces/{obj['metadata']['namespace']}/configmaps/{obj['metadata']['name']}"
    return f"/apis/admissionregistration.k8s.io/v1/{PLURALS[obj['kind']]}/{obj['metadata']['name']}"


def test_admission_is_applied_before_the_job_and_admits_all_it_launches(pinned: Path) -> None:
    lock_sha = hashlib.sha256((pinned / "pinguard.lock").read_bytes()).hexdigest()
    expected = vap.objects(Source(lockfile.read(pinned / "pinguard.lock"), "pinguard.lock", lock_sha), ("team",),
                           "deny")
    with FakeKube() as fake:
        status, out, err = _launch(fake, "training/rayjob.yaml", admission=True)
        requests, applied = fake.requests, dict(fake.applied)
        launched = [*fake.posted("rayjobs"), *fake.pods.values()]
    assert status == 0, err
    patches = [r for r in requests if r.method == "PATCH"]
    assert [r.bare_path for r in patches] == [_path(obj) for obj in expected]  # params, policies, then bindings
    assert all(r.headers["Content-Type"] == APPLY_PATCH and r.query["fieldManager"] == ["pinguard"]
               and r.query["force"][0].lower() == "true" for r in patches)
    posting = next(i for i, r in enumerate(requests) if r.method == "POST")
    assert posting > requests.index(patches[-1])  # the policy is in place before the job is created
    objects = [applied[PLURALS[obj["kind"]], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]]
               for obj in expected]
    assert [{**o, "metadata": {k: v for k, v in o["metadata"].items() if k not in SERVER_SET}}
            for o in objects] == expected
    assert len(launched) == 5  # the RayJob, the head, two workers, the submitter
    assert all(admit(objects, obj, namespace="team").allowed for obj in launched)
    assert ("applied ConfigMap kube-system/pinguard-lock.team\n"
            "applied ValidatingAdmissionPolicy pinguard-lock-pods.team\n") in out
    assert ("applied ValidatingAdmissionPolicyBinding pinguard-lock-pytorchjobs.team\n"
            "created RayJob team/qwen-fsdp") in out


def test_dry_run_prints_the_admission_objects_before_the_job(pinned: Path) -> None:
    status, out, err = _main("run", "--dry-run", "--admission", "--namespace", "team", "training/raycluster.yaml")
    assert status == 0, err
    *admission, job = yaml.safe_load_all(out)
    keepalive, admission = admission[:3], admission[3:]
    assert [obj["metadata"]["name"] for obj in keepalive] == ["pinguard-keepalive"] * 3
    assert [obj["kind"] for obj in admission] == [
        "ConfigMap", *["ValidatingAdmissionPolicy"] * 8, *["ValidatingAdmissionPolicyBinding"] * 8]
    assert job["kind"] == "RayCluster"
    assert all(b["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"] == ["team"]
               for b in admission if b["kind"] == "ValidatingAdmissionPolicyBinding")
    assert "`pinguard export admission --format vap --namespace team --mode deny` writes it" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--dry-run", "--admission", "training/rayjob.yaml"], "--admission binds the job's namespace: name it"),
    (["--local", "--admission", "training/rayjob.yaml"], "--local runs nothing there"),
])
def test_admission_usage_errors(pinned: Path, args: list[str], message: str) -> None:
    status, out, err = _main("run", *args)
    assert (status, out) == (2, "") and message in err and "Traceback" not in err


def test_a_cluster_without_admission_policies_is_told_and_nothing_is_created(pinned: Path) -> None:
    status_404 = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                             "reason": "NotFound", "message": "the server could not find the requested resource"})
    routes = [Route("GET", r"/version/?", Response(200, {"Content-Type": "application/json"}, b'{"major": "1"}')),
              Route("PATCH", r"/api/v1/.*", Response(200, {"Content-Type": "application/json"}, b"{}")),
              Route("PATCH", r"/apis/admissionregistration\.k8s\.io/.*",
                    Response(404, {"Content-Type": "application/json"}, status_404.encode()))]
    with FakeRegistry(routes) as old_cluster:
        kubeconfig = Path("kubeconfig")
        kubeconfig.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "old",
            "clusters": [{"name": "old", "cluster": {"server": old_cluster.url}}],
            "users": [{"name": "old", "user": {"token": "t"}}],
            "contexts": [{"name": "old", "context": {"cluster": "old", "user": "old", "namespace": "team"}}]}))
        status, _, err = _main("run", "--admission", "training/rayjob.yaml", env={"KUBECONFIG": str(kubeconfig)})
        methods = [r.method for r in old_cluster.requests]
    assert status == 2 and "POST" not in methods
    assert ("applying ValidatingAdmissionPolicy pinguard-keepalive: 404 Not Found: the server could not find the "
            "requested resource (ValidatingAdmissionPolicy needs Kubernetes 1.30 or later)") in err
