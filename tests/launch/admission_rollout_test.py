"""The lock's admission objects reaching a cluster, by `run --admission` and by the real kubectl, in every order.

The cluster is `testing.fake_kube.FakeKube`, a FAKE API server (no real one runs here)
that implements server-side apply (field managers, conflicts) and models Kubernetes
#130887: its `informer_died` names the request after which no binding read params, which
on a real API server stops it reading params ConfigMaps until it restarts. kubectl is the
real one (`--validate=false`: the fake serves no openapi).
"""
from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("kubernetes", reason="needs the k8s extra: pip install 'pinguard[k8s]'")

from pinguard.admission import keepalive, params, vap
from pinguard.admission.export import read_source
from pinguard.admission.objects import COMPONENT, KEEPALIVE_COMPONENT, LAYOUT_LABEL, SCOPE_LABEL
from pinguard.cli import main
from pinguard.launch.cluster import Kube, admit_only_the_lock, connect
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from testing.fake_kube import FakeKube
from testing.lockdata import INDEX, locked_test_digest

NAMESPACE = "team"
SCOPE = "pinguard-lock.team"
APPLY = ["apply", "--validate=false", "--server-side", "--field-manager=pinguard", "--force-conflicts", "-f"]
DELETE_EXPORT = ["delete", "validatingadmissionpolicybindings,validatingadmissionpolicies,configmaps",
                 "-n", "kube-system", "-l", f"{SCOPE_LABEL}={SCOPE}"]
RESOURCES = {"ConfigMap": "configmaps", **vap.PLURALS}



@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKube]:
    monkeypatch.chdir(tmp_path)
    with FakeKube() as started:
        started.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
        yield started


@pytest.fixture
def kube(fake: FakeKube) -> Kube:
    return connect({"KUBECONFIG": "kubeconfig"})


def _entry(index: int, tag: str = "1.0") -> LockEntry:
    name = f"registry.example.com/team/image-{index:03}"
    return LockEntry(name, "1.0", locked_test_digest(name, tag), INDEX, 0, "other", None, "t",
                     {"linux/amd64": locked_test_digest(name, f"{tag}/amd64")})


def _lock(entries: int, tag: str = "1.0") -> Path:
    """pinguard.lock of `entries` images (`tag` changes every digest), and its export for the team namespace."""
    lockfile.write(Path("pinguard.lock"), Lock().with_entries(_entry(i, tag) for i in range(entries)))
    out, err = io.StringIO(), io.StringIO()
    export = Path(f"admission-{entries}-{tag}.yaml")
    assert main(["export", "admission", "--namespace", NAMESPACE, "--output", str(export)], env={},
                stdout=out, stderr=err) == 0, err.getvalue()
    return export


def _run(kube: Kube) -> str:
    """What `run --admission` does before it creates the job; what it says."""
    said = io.StringIO()
    admit_only_the_lock(kube, read_source(Path("pinguard.lock")), NAMESPACE,
                        lambda line: print(line, file=said))
    return said.getvalue()


def _kubectl(kubectl: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([kubectl, *args], env={**os.environ, "KUBECONFIG": "kubeconfig"}, capture_output=True,
                          text=True, timeout=120, check=False)


def _exported(path: Path) -> list[dict[str, Any]]:
    return [obj for obj in yaml.safe_load_all(path.read_text()) if obj]


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    return RESOURCES[obj["kind"]], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def _live(fake: FakeKube, key: tuple[str, str, str]) -> dict[str, Any]:
    stored = fake.applied[key]
    return {**stored, "metadata": {k: v for k, v in stored["metadata"].items()
                                   if k not in ("uid", "resourceVersion", "creationTimestamp")}}


def _scoped(fake: FakeKube) -> set[tuple[str, str, str]]:
    return {key for key, obj in fake.applied.items() if obj["metadata"].get("labels", {}).get(SCOPE_LABEL) == SCOPE}


def _holds_exactly(fake: FakeKube, export: Path) -> None:
    """The cluster holds the export's objects as it wrote them, the keepalive, and nothing else of the scope."""
    objects = _exported(export)
    assert {_key(obj) for obj in objects} == _scoped(fake) | {_key(obj) for obj in keepalive.objects()}
    assert all(_live(fake, _key(obj)) == obj for obj in objects)


@pytest.mark.parametrize("order", [("run", "kubectl"), ("kubectl", "run")], ids="-then-".join)
def test_run_admission_and_the_readme_s_kubectl_apply_interleave_without_conflict(
        fake: FakeKube, kube: Kube, kubectl: str, order: Sequence[str]) -> None:
    for step, tag in zip(order, ("1.0", "1.1"), strict=True):  # the second lock moves every digest
        export = _lock(3, tag)
        if step == "run":
            _run(kube)
        else:
            applied = _kubectl(kubectl, *APPLY, str(export))
            assert applied.returncode == 0, applied.stderr
        _holds_exactly(fake, export)
    assert all(r.method != "DELETE" for r in fake.requests)  # one layout: nothing to prune
    assert {manager for owners in fake.owners.values() for manager in owners} == {"pinguard"}
    assert fake.informer_died is None


def test_what_another_field_manager_applied_outlives_run_admission(fake: FakeKube, kube: Kube, kubectl: str) -> None:
    """Why every command names the field manager `pinguard`: server-side apply removes only what the applier alone
    owned, so digests a plain `kubectl apply --server-side` (manager `kubectl`) put there stay after `run`."""
    old = _lock(3)
    first = _exported(old)
    applied = _kubectl(kubectl, "apply", "--validate=false", "--server-side", "-f", str(old))
    assert applied.returncode == 0, applied.stderr
    export = _lock(3, "1.1")  # every digest moves
    _run(kube)  # forced: no conflict
    [configmap] = [obj for obj in first if obj["kind"] == "ConfigMap" and SCOPE_LABEL in obj["metadata"]["labels"]]
    [newer] = [obj for obj in _exported(export) if _key(obj) == _key(configmap)]
    live = fake.applied[_key(configmap)]["data"]
    assert newer["data"].items() <= live.items() and set(configmap["data"]) - set(newer["data"]) <= set(live)
    assert set(fake.owners[_key(configmap)]) == {"kubectl", "pinguard"}
    again = _kubectl(kubectl, "apply", "--validate=false", "--server-side", "--force-conflicts", "-f", str(export))
    assert again.returncode == 0, again.stderr  # the manager that applied them applies the new lock: they go
    _holds_exactly(fake, export)


def test_kubectl_apply_as_another_manager_without_force_conflicts(fake: FakeKube, kube: Kube, kubectl: str) -> None:
    first = _exported(_lock(3))
    _run(kube)
    refused = _kubectl(kubectl, "apply", "--validate=false", "--server-side", "-f", str(_lock(3, "1.1")))
    assert refused.returncode != 0
    assert 'Apply failed with' in refused.stderr and 'conflicts with "pinguard":\n- .data.' in refused.stderr
    configmap = next(obj for obj in first if obj["kind"] == "ConfigMap" and SCOPE_LABEL in obj["metadata"]["labels"])
    assert _live(fake, _key(configmap))["data"] == configmap["data"]  # the first lock still judges
    assert any(r.method == "PATCH" and "fieldManager=kubectl" in r.path for r in fake.requests)


def _layout(export: Path) -> str:
    return next(str(obj["metadata"]["labels"][LAYOUT_LABEL]) for obj in _exported(export)
                if obj["kind"] == "ConfigMap" and LAYOUT_LABEL in obj["metadata"]["labels"])


@pytest.mark.parametrize("sizes", [(2, 40), (40, 2)], ids=["grown", "shrunk"])
def test_a_lock_of_another_layout_is_applied_then_the_old_layout_pruned(
        fake: FakeKube, kube: Kube, monkeypatch: pytest.MonkeyPatch, sizes: tuple[int, int]) -> None:
    monkeypatch.setattr(params, "STORED_BUDGET", 16 * 1024)  # small locks split over cells
    old = _lock(sizes[0])
    _run(kube)
    before = len(fake.requests)
    new = _lock(sizes[1])
    assert _layout(old) != _layout(new)
    said = _run(kube)
    _holds_exactly(fake, new)
    requests = fake.requests[before:]
    methods = [r.method for r in requests if r.method in ("PATCH", "DELETE")]
    assert methods == sorted(methods, key=["PATCH", "DELETE"].index)  # apply, then prune
    deleted = [r.bare_path.split("/")[-2] for r in requests if r.method == "DELETE"]
    stale = {_key(obj) for obj in _exported(old)} - {_key(obj) for obj in _exported(new)}
    assert deleted == sorted(deleted, reverse=True)  # bindings, then ConfigMaps
    assert sorted(fake.removed) == sorted(key for key in stale if key[0] != "validatingadmissionpolicies")
    assert [line.split()[:2] for line in said.splitlines() if line.startswith("deleted")] == [
        ["deleted", "ValidatingAdmissionPolicyBinding"]] * deleted.count("validatingadmissionpolicybindings") + [
        ["deleted", "ConfigMap"]] * deleted.count("configmaps")
    assert fake.informer_died is None


def test_the_same_layout_again_deletes_nothing(fake: FakeKube, kube: Kube) -> None:
    _lock(3)
    _run(kube)
    _run(kube)
    assert fake.removed == [] and fake.informer_died is None


def test_the_prune_leaves_other_scopes_and_the_keepalive(fake: FakeKube, kube: Kube,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(params, "STORED_BUDGET", 16 * 1024)
    _lock(40)
    # a layout of many cells
    admit_only_the_lock(kube, read_source(Path("pinguard.lock")), "elsewhere", lambda _line: None)
    elsewhere = set(fake.applied)
    _lock(2)
    _run(kube)  # team's one cell: another layout than elsewhere's
    assert fake.removed == [] and elsewhere <= set(fake.applied)
    assert {_key(obj) for obj in keepalive.objects()} <= elsewhere


def test_deleting_an_export_and_applying_it_again_keeps_the_params_informer(fake: FakeKube, kubectl: str) -> None:
    export = _lock(3)
    for args in ([*APPLY, str(export)], DELETE_EXPORT):
        done = _kubectl(kubectl, *args)
        assert done.returncode == 0, done.stderr
    assert _scoped(fake) == set() and set(fake.applied) == {_key(obj) for obj in keepalive.objects()}
    assert fake.bindings_reading_params() == [keepalive.NAME]  # the keepalive stays bound
    assert _kubectl(kubectl, *APPLY, str(export)).returncode == 0
    _holds_exactly(fake, export)
    assert fake.informer_died is None


def test_without_the_keepalive_the_same_delete_kills_the_params_informer(fake: FakeKube, kubectl: str) -> None:
    """The fake can tell: an export without the keepalive objects loses its params for good."""
    bare = Path("bare.yaml")
    bare.write_text(yaml.safe_dump_all([obj for obj in _exported(_lock(3))
                                        if obj["metadata"]["labels"].get(COMPONENT) != KEEPALIVE_COMPONENT]))
    for args in ([*APPLY, str(bare)], DELETE_EXPORT, [*APPLY, str(bare)]):
        done = _kubectl(kubectl, *args)
        assert done.returncode == 0, done.stderr
    assert fake.informer_died is not None
    assert fake.informer_died.method == "DELETE" and "/validatingadmissionpolicybindings/" in fake.informer_died.path


def test_the_export_s_update_by_kubectl_applies_then_prunes_and_keeps_the_informer(
        fake: FakeKube, kubectl: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What an export's header tells a person to run when the lock changes layout, as kubectl runs it."""
    monkeypatch.setattr(params, "STORED_BUDGET", 16 * 1024)
    for export in (_lock(2), _lock(40)):
        prune = ["delete", "validatingadmissionpolicybindings,configmaps", "-n", "kube-system",
                 "-l", f"{SCOPE_LABEL}={SCOPE},{LAYOUT_LABEL}!={_layout(export)}"]
        for args in ([*APPLY, str(export)], prune):
            done = _kubectl(kubectl, *args)
            assert done.returncode == 0, done.stderr
        _holds_exactly(fake, export)
    assert fake.removed and fake.informer_died is None
