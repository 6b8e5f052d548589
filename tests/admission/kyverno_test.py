"""The Kyverno ClusterPolicy, read back and checked field by field (no Kyverno binary here).

What Kyverno would do with it is played with the pieces it is made of: the rule's
`foreach` list is a JMESPath expression (evaluated with `jmespath`, the same language
Kyverno's go-jmespath speaks), the deny key cuts the image with `regex_replace_all`
(Go's RE2 replace, played with Python's `re`, which reads the pattern alike but for a
`$` before a final newline, and no image ends in one), and `AnyNotIn` denies a key
that is not in the list. The rule names every kind it judges, so no autogen is played.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any

import jmespath
import pytest
import yaml

from pinguard.admission import kyverno
from pinguard.admission.objects import MODES, Source
from pinguard.admission.workloads import custom
from pinguard.cli import main
from pinguard.errors import PinguardError
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from testing.lockdata import INDEX, locked_test_digest
from tests.admission.helpers import RESOURCES, holding, pod_spec

RAY = "public.ecr.aws/deep-learning-containers/ray"
TAG = "train-ml-cuda-v1.1"
DIGEST = locked_test_digest(RAY, TAG)
PLATFORM = locked_test_digest(RAY, TAG + " arm64")
OTHER = "sha256:" + "b" * 64
LOCK = Lock().with_entries([LockEntry(RAY, TAG, DIGEST, INDEX, 0, "other", None, "t", {"linux/arm64": PLATFORM})])
SOURCE = Source(LOCK, "deploy/pinguard.lock", "1" * 64)
CUT = re.compile(r"\{\{ regex_replace_all\('(?P<pattern>[^']+)', element\.image, '\$1'\) \}\}")


def policy(bound: tuple[str, ...] = (), mode: str = "deny", kinds: tuple[str, ...] = ()) -> dict[str, Any]:
    [only] = kyverno.objects(SOURCE, bound, mode, custom(kinds))
    return only


def denied(rules: list[dict[str, Any]], obj: dict[str, Any], kind: str | None = None) -> list[str]:
    """The images the rules matching `obj`'s kind deny, in foreach order, as Kyverno would evaluate them."""
    kind = kind or obj["kind"]
    matching = [r for r in rules if kind in r["match"]["any"][0]["resources"]["kinds"]]
    assert matching, f"no rule for {kind}"
    images = []
    for rule in matching:
        for foreach in rule["validate"]["foreach"]:
            [condition] = foreach["deny"]["conditions"]["any"]
            cut = CUT.fullmatch(condition["key"])
            assert cut is not None and condition["operator"] == "AnyNotIn"
            for container in jmespath.search(foreach["list"], {"request": {"object": obj}}) or []:
                if re.sub(cut["pattern"], r"\1", container.get("image", "")) not in condition["value"]:
                    images.append(container.get("image", ""))
    return images


def test_the_policy_field_by_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deploy").mkdir()
    lockfile.write(tmp_path / "deploy" / "pinguard.lock", LOCK)
    out = io.StringIO()
    assert main(["export", "admission", "--format", "kyverno", "--lockfile", "deploy/pinguard.lock"], env={},
                stdout=out, stderr=io.StringIO()) == 0
    document = yaml.safe_load(out.getvalue())
    sha256 = hashlib.sha256((tmp_path / "deploy" / "pinguard.lock").read_bytes()).hexdigest()
    assert [document] == kyverno.objects(Source(LOCK, "deploy/pinguard.lock", sha256), (), "deny")
    assert document["apiVersion"] == "kyverno.io/v1" and document["kind"] == "ClusterPolicy"
    metadata = document["metadata"]
    assert metadata["name"] == "pinguard-lock"
    assert metadata["labels"] == {"app.kubernetes.io/managed-by": "pinguard",
                                  "app.kubernetes.io/component": "admission-policy",
                                  "pinguard.dev/scope": "pinguard-lock"}
    assert metadata["annotations"]["pinguard.dev/lockfile"] == "deploy/pinguard.lock"
    assert metadata["annotations"]["pinguard.dev/lock-sha256"] == sha256
    assert document["spec"] == {"background": True, "rules": document["spec"]["rules"]}
    [rule] = document["spec"]["rules"]
    assert rule["match"]["any"][0]["resources"]["kinds"] == [
        "Pod", "Pod/ephemeralcontainers", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job",
        "ReplicationController", "CronJob", "RayCluster", "RayJob", "RayService", "RayCronJob", "PyTorchJob"]
    assert set(rule) == {"name", "match", "exclude", "validate"}  # validate only: no mutate, generate, verifyImages
    assert rule["exclude"] == {"any": [{"resources": {"namespaces": ["kube-system"]}}]}
    validate = rule["validate"]
    assert set(validate) == {"failureAction", "message", "foreach"} and validate["failureAction"] == "Enforce"
    assert validate["message"].startswith("image {{ element.image }} is not pinned to a digest of the lock")
    [foreach] = validate["foreach"]
    assert set(foreach) == {"list", "deny"}
    [condition] = foreach["deny"]["conditions"]["any"]
    assert condition["value"] == sorted([DIGEST, PLATFORM])  # index and platform digests, sorted, written once
    assert CUT.fullmatch(condition["key"])
    assert out.getvalue().count(DIGEST) == 1


@pytest.mark.parametrize(("mode", "action", "warning"), [("deny", "Enforce", None), ("warn", "Audit", True),
                                                         ("audit", "Audit", None)])
def test_the_mode_is_the_failure_action(mode: str, action: str, warning: bool | None) -> None:
    document = policy(mode=mode)
    assert {r["validate"]["failureAction"] for r in document["spec"]["rules"]} == {action}
    assert document["spec"].get("emitWarning") is warning
    assert set(MODES) == {"deny", "warn", "audit"}


def test_named_namespaces_are_matched_none_excluded_and_the_policy_is_theirs() -> None:
    document = policy(("research", "team"))
    assert document["metadata"]["name"] == "pinguard-lock.research.team"
    for rule in document["spec"]["rules"]:
        assert rule["match"]["any"][0]["resources"]["namespaces"] == ["research", "team"]
        assert "exclude" not in rule


@pytest.mark.parametrize("kind", RESOURCES)
def test_every_kind_admits_the_locked_image_and_denies_the_rest(kind: str) -> None:
    rules = policy()["spec"]["rules"]
    locked = pod_spec(("ray", f"{RAY}:{TAG}@{DIGEST}"), init=[("copy", f"{RAY}@{PLATFORM}")])
    assert denied(rules, holding(kind, locked)) == []
    images = [f"{RAY}:{TAG}", f"{RAY}:{TAG}@{OTHER}", "busybox", f"{RAY}@{OTHER}@{DIGEST}", f"sidecar@{DIGEST}x"]
    for image in images:
        assert denied(rules, holding(kind, pod_spec(("ray", f"{RAY}@{DIGEST}"), ("side", image))))[:1] == [image]


def test_an_ephemeral_container_is_denied_on_its_subresource() -> None:
    rules = policy()["spec"]["rules"]
    pod = {"kind": "Pod", "spec": {
        **pod_spec(("ray", f"{RAY}@{DIGEST}")), "ephemeralContainers": [{"name": "debugger", "image": "busybox:1.36"}]}}
    assert denied(rules, pod, "Pod/ephemeralcontainers") == ["busybox:1.36"]


def test_a_rayjob_without_a_cluster_spec_has_nothing_to_deny_but_its_submitter() -> None:
    rules = policy()["spec"]["rules"]
    job = {"kind": "RayJob", "spec": {"clusterSelector": {"ray.io/cluster": "shared"}}}
    assert denied(rules, job) == []
    job["spec"]["submitterPodTemplate"] = {"spec": pod_spec(("submitter", "rayproject/ray:2.40.0"))}
    assert denied(rules, job) == ["rayproject/ray:2.40.0"]


def test_a_custom_kind_is_matched_by_its_group_and_version_and_judged_at_its_paths() -> None:
    rules = policy(kinds=("example.com/v1/TrainRun:spec.template.spec,spec.workers[].template.spec,"
                          "spec.replicas.*.spec",))["spec"]["rules"]
    assert "example.com/v1/TrainRun" in rules[0]["match"]["any"][0]["resources"]["kinds"]
    run = {"kind": "example.com/v1/TrainRun", "spec": {
        "template": {"spec": pod_spec(("a", "busybox:1"))}, "workers": [{"template": {"spec": pod_spec(("b", "b:2"))}}],
        "replicas": {"x": {"spec": pod_spec(("c", "c:3"))}}}}
    assert sorted(denied(rules, run)) == ["b:2", "busybox:1", "c:3"]
    assert denied(rules, {"kind": "example.com/v1/TrainRun", "spec": {}}) == []


@pytest.mark.parametrize(("image", "cut"), [
    (f"{RAY}:{TAG}@{DIGEST}", DIGEST), (f"{RAY}@{DIGEST}", DIGEST), (f"{RAY}:{TAG}", ""), ("", ""),
    (f"{RAY}@{OTHER}@{DIGEST}", ""), (DIGEST, ""), (f"{RAY}@{DIGEST.upper()}", ""),
])
def test_the_deny_key_is_the_digest_of_a_pinned_image_and_nothing_else(image: str, cut: str) -> None:
    match = CUT.fullmatch(kyverno.DIGEST_OF_IMAGE)
    assert match is not None and re.sub(match["pattern"], r"\1", image) == cut


def test_a_policy_too_large_for_etcd_is_refused_with_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    size = len(json.dumps(policy()).encode())
    monkeypatch.setattr(kyverno, "MAX_POLICY", size - 1)
    with pytest.raises(PinguardError, match=rf"^deploy/pinguard.lock: its 2 digests make a Kyverno policy of {size} "
                                            rf"bytes, more than the {size - 1} pinguard writes \(etcd stores at most "
                                            r"1572864 bytes an object\): use `--format vap`"):
        policy()


def test_a_lock_of_15000_digests_fits_in_one_policy() -> None:
    many = Lock().with_entries(
        LockEntry(f"r.io/i{i}", "1", locked_test_digest("i", str(i)), INDEX, 0, "other", None, "t",
                  {p: locked_test_digest(p, str(i)) for p in ("linux/amd64", "linux/arm64")}) for i in range(5000))
    [document] = kyverno.objects(Source(many, "pinguard.lock", "0" * 64), (), "deny")
    assert len(json.dumps(document).encode()) <= kyverno.MAX_POLICY < 1536 * 1024
