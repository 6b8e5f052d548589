"""Hostile pods for `audit` and `run`'s watch: containers added outside the manifest, where the spec keeps them.

The cluster is `testing.fake_kube.FakeKube`, a FAKE API server on loopback, reached through
the real `kubernetes` client; commands run through `pinguard.cli.main` or `run` as the command
line calls it.
"""
from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="needs the k8s extra: pip install 'pinguard[k8s]'")

from pinguard.cli import main
from pinguard.commands.options import Options
from pinguard.commands.run import run
from pinguard.lock import lockfile
from pinguard.policy.load import for_command
from pinguard.scan.paths import scan_paths
from testing.fake_kube import FakeKube, add_ephemeral, image_id_for, pod
from testing.lockdata import lock_for, locked_test_digest

ROOT = Path(__file__).resolve().parents[2]
RAY = "public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1"
PINNED = f"{RAY}@{locked_test_digest('public.ecr.aws/deep-learning-containers/ray', 'train-ml-cuda-v1.1')}"
EVIL = "evil.example/tools:latest"


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKube]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(f"kind: Pod\nspec:\n  containers:\n  - name: ray\n    image: {RAY}\n")
    lockfile.write(tmp_path / "pinguard.lock", lock_for(scan_paths(["pod.yaml"]).found))
    with FakeKube() as server:
        server.write_kubeconfig(tmp_path / "kubeconfig", namespace="team")
        yield server


def _audit(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["audit", *args], env={"KUBECONFIG": "kubeconfig"}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _debugged(image: str = EVIL, image_id: str | None = None) -> dict[str, object]:
    """A pod on the locked digest that someone ran `kubectl debug` on."""
    body = pod("team", "trainer", [("ray", PINNED, image_id_for(PINNED))])
    return add_ephemeral(body, "debugger", image, image_id or image_id_for(image))


def test_audit_reports_an_ephemeral_debug_container(fake: FakeKube) -> None:
    fake.add_pod(_debugged())
    status, out, err = _audit()
    assert status == 1, err
    assert out.splitlines() == [
        f"team/trainer ephemeral container debugger: image `{EVIL}` is not pinned to a digest [unpinned]",
        f"team/trainer ephemeral container debugger: image `{EVIL}` runs {image_id_for(EVIL)}; the lock has no "
        "entry for it [not-locked]",
        "2 problems; checked 2 containers in 1 pod (namespace team)",
    ]


def test_audit_json_names_the_kind_of_container(fake: FakeKube) -> None:
    fake.add_pod(_debugged())
    status, out, _ = _audit("--format", "json")
    report = json.loads(out)
    assert status == 1
    assert report["summary"] == {"pods": 1, "containers": 2, "reported": 2, "allowed": 0}
    assert {(c["container"], c["kind"]) for c in report["containers"]} == {("debugger", "ephemeral container")}


def test_a_sidecar_policy_never_excuses_an_ephemeral_container(fake: FakeKube) -> None:
    fake.add_pod(_debugged())
    Path(".pinguard.yaml").write_text('sidecars:\n  - {name: debugger}\n  - {image: "evil.example/*"}\n')
    status, out, _ = _audit()
    assert status == 1 and out.endswith("2 problems; checked 2 containers in 1 pod (namespace team)\n")


def test_an_ephemeral_container_on_the_locked_digest_passes(fake: FakeKube) -> None:
    fake.add_pod(_debugged(PINNED))
    assert _audit() == (0, "0 problems; checked 2 containers in 1 pod (namespace team)\n", "")


def test_audit_reports_an_init_container(fake: FakeKube) -> None:
    body = pod("team", "trainer", [("ray", PINNED, image_id_for(PINNED))])
    body["spec"]["initContainers"] = [{"name": "fetch", "image": EVIL}]
    body["status"]["initContainerStatuses"] = [{"name": "fetch", "imageID": image_id_for(EVIL)}]
    fake.add_pod(body)
    status, out, _ = _audit()
    assert status == 1
    assert out.startswith(f"team/trainer init container fetch: image `{EVIL}` is not pinned to a digest [unpinned]")
    assert out.endswith("2 problems; checked 2 containers in 1 pod (namespace team)\n")


def test_a_container_named_as_another_kinds_is_judged_by_its_own_status(fake: FakeKube) -> None:
    # The debug container takes the name of the locked one: its status must not lend it the locked digest.
    body = pod("team", "trainer", [("ray", PINNED, image_id_for(PINNED))])
    fake.add_pod(add_ephemeral(body, "ray", PINNED, image_id_for(PINNED, "sha256:" + "e" * 64)))
    status, out, _ = _audit()
    assert status == 1 and "ephemeral container ray: image" in out and "[not-locked]" in out


@pytest.fixture
def pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The training manifests, locked and pinned."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "training").mkdir()
    shutil.copy(ROOT / "training" / "rayjob.yaml", tmp_path / "training" / "rayjob.yaml")
    lockfile.write(tmp_path / "pinguard.lock", lock_for(scan_paths(["training/rayjob.yaml"]).found))
    assert main(["pin", "training/rayjob.yaml"], env={}, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    return tmp_path


def test_run_stops_the_job_when_a_debug_container_joins_a_confirmed_pod(pinned: Path) -> None:
    head = "qwen-fsdp-raycluster-fake-head"
    with FakeKube(debug={0: [("debugger", EVIL)]}, debug_after=3, finish_after=8) as fake:
        out, err = io.StringIO(), io.StringIO()
        kubeconfig = fake.write_kubeconfig(Path("kubeconfig"), namespace="team")
        options = Options(stdout=out, stderr=err, env={"KUBECONFIG": str(kubeconfig)})
        status = run("training/rayjob.yaml", options, for_command([], "aws-dlc", project=False), poll=0.01)
        assert fake.deleted == [("rayjobs", "team", "qwen-fsdp")]
    assert status == 1
    assert f"pod {head}: ray-head runs" in out.getvalue()  # confirmed before the debug container came
    assert (f"pinguard: team/{head} ephemeral container debugger: image `{EVIL}` is not pinned to a digest "
            "[unpinned]") in err.getvalue()
    assert "stopped: deleted RayJob team/qwen-fsdp" in err.getvalue()
