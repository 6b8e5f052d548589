"""The Kyverno ClusterPolicy, read back and checked field by field (no Kyverno binary here).

What Kyverno would do with it is played with the pieces it is made of: each rule's
`foreach` list is a JMESPath expression (evaluated with `jmespath`, the same language
Kyverno's go-jmespath speaks), the deny key cuts the image with `regex_replace_all`
(Go's RE2 replace, played with Python's `re`, which reads the pattern alike but for a
`$` before a final newline, and no image ends in one), and `AnyNotIn` denies a key
that is not in the list. Autogen is played as Kyverno does it, by rewriting
`request.object.spec` in the Pod rule for each controller.
"""
from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path
from typing import Any

import jmespath
import pytest
import yaml

from pinguard import lockfile
from pinguard.admission import MODES, Source, kyverno
from pinguard.cli import main
from pinguard.lockfile import Lock, LockEntry
from testing.lockdata import locked_test_digest
from tests.admission.helpers import RESOURCES, holding, pod_spec

RAY = "public.ecr.aws/deep-learning-containers/ray"
TAG = "train-ml-cuda-v1.1"
DIGEST = locked_test_digest(RAY, TAG)
PLATFORM = locked_test_digest(RAY, TAG + " arm64")
OTHER = "sha256:" + "b" * 64
LOCK = Lock().with_entries([LockEntry(RAY, TAG, DIGEST, "m", 0, "other", None, "t", {"linux/arm64": PLATFORM})])
SOURCE = Source(LOCK, "deploy/pinguard.lock", "1" * 64)
CUT = re.compile(r"\{\{ regex_replace_all\('(?P<pattern>[^']+)', element\.image, '\$1'\) \}\}")
# Where autogen puts the pod spec of each controller, as Kyverno rewrites `request.object.spec` for it.
AUTOGEN = {"Deployment": "spec.template.spec", "StatefulSet": "spec.template.spec", "DaemonSet": "spec.template.spec",
           "ReplicaSet": "spec.template.spec", "Job": "spec.template.spec",
           "CronJob": "spec.jobTemplate.spec.template.spec"}


def policy(bound: tuple[str, ...] = (), mode: str = "deny") -> dict[str, Any]:
    [only] = kyverno.objects(SOURCE, bound, mode)
    return only


def denied(rules: list[dict[str, Any]], obj: dict[str, Any]) -> list[str]:
    """The images the rules matching `obj`'s kind deny, in foreach order, as Kyverno would evaluate them."""
    kind = obj["kind"]
    matching = [(r, None) for r in rules if r["match"]["any"][0]["resources"]["kinds"] == [kind]]
    if kind in AUTOGEN:
        matching = [(r, AUTOGEN[kind]) for r in rules if r["match"]["any"][0]["resources"]["kinds"] == ["Pod"]]
    assert matching, f"no rule for {kind}"
    images = []
    for rule, spec_path in matching:
        for foreach in rule["validate"]["foreach"]:
            expression = foreach["list"]
            if spec_path:
                expression = expression.replace("request.object.spec", f"request.object.{spec_path}")
            [condition] = foreach["deny"]["conditions"]["any"]
            cut = CUT.fullmatch(condition["key"])
            assert cut is not None and condition["operator"] == "AnyNotIn"
            for container in jmespath.search(expression, {"request": {"object": obj}}) or []:
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
                                  "app.kubernetes.io/component": "admission-policy"}
    assert metadata["annotations"]["pinguard.dev/lockfile"] == "deploy/pinguard.lock"
    assert metadata["annotations"]["pinguard.dev/lock-sha256"] == sha256
    assert "pod-policies.kyverno.io/autogen-controllers" not in metadata["annotations"]  # Kyverno's default: all
    assert document["spec"] == {"background": True, "rules": document["spec"]["rules"]}
    rules = document["spec"]["rules"]
    assert [(r["name"], r["match"]["any"][0]["resources"]["kinds"]) for r in rules] == [
        ("pods", ["Pod"]), ("pod-ephemeral-containers", ["Pod/ephemeralcontainers"]), ("ray-clusters", ["RayCluster"]),
        ("ray-jobs", ["RayJob"]), ("ray-services", ["RayService"]), ("pytorch-jobs", ["PyTorchJob"])]
    for rule in rules:
        assert set(rule) == {"name", "match", "exclude", "validate"}  # validate only: no mutate, generate, verifyImages
        assert rule["exclude"] == {"any": [{"resources": {"namespaces": ["kube-system"]}}]}
        validate = rule["validate"]
        assert set(validate) == {"failureAction", "message", "foreach"} and validate["failureAction"] == "Enforce"
        assert validate["message"].startswith("image {{ element.image }} is not pinned to a digest of the lock")
        [foreach] = validate["foreach"]
        assert set(foreach) == {"list", "deny"}
        [condition] = foreach["deny"]["conditions"]["any"]
        assert condition["value"] == sorted([DIGEST, PLATFORM])  # index and platform digests, sorted
        assert CUT.fullmatch(condition["key"])
    # Autogen makes controller rules from a rule whose kinds are Pod alone, and only when no rule mixes Pod with
    # other kinds, names or selectors; custom resources it never covers, so each has its own rule.
    assert all(r["match"]["any"][0]["resources"]["kinds"] == ["Pod"] or "Pod" not in r["match"]["any"][0]["resources"][
        "kinds"] for r in rules)
    assert all(set(r["match"]["any"][0]["resources"]) <= {"kinds", "namespaces"} for r in rules)


@pytest.mark.parametrize(("mode", "action", "warning"), [("deny", "Enforce", None), ("warn", "Audit", True),
                                                         ("audit", "Audit", None)])
def test_the_mode_is_the_failure_action(mode: str, action: str, warning: bool | None) -> None:
    document = policy(mode=mode)
    assert {r["validate"]["failureAction"] for r in document["spec"]["rules"]} == {action}
    assert document["spec"].get("emitWarning") is warning
    assert set(MODES) == {"deny", "warn", "audit"}


def test_named_namespaces_are_matched_and_none_excluded() -> None:
    for rule in policy(("research", "team"))["spec"]["rules"]:
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
    pod = {"kind": "Pod/ephemeralcontainers", "spec": {
        **pod_spec(("ray", f"{RAY}@{DIGEST}")), "ephemeralContainers": [{"name": "debugger", "image": "busybox:1.36"}]}}
    assert denied(rules, pod) == ["busybox:1.36"]


def test_a_rayjob_without_a_cluster_spec_has_nothing_to_deny_but_its_submitter() -> None:
    rules = policy()["spec"]["rules"]
    job = {"kind": "RayJob", "spec": {"clusterSelector": {"ray.io/cluster": "shared"}}}
    assert denied(rules, job) == []
    job["spec"]["submitterPodTemplate"] = {"spec": pod_spec(("submitter", "rayproject/ray:2.40.0"))}
    assert denied(rules, job) == ["rayproject/ray:2.40.0"]


@pytest.mark.parametrize(("image", "cut"), [
    (f"{RAY}:{TAG}@{DIGEST}", DIGEST), (f"{RAY}@{DIGEST}", DIGEST), (f"{RAY}:{TAG}", ""), ("", ""),
    (f"{RAY}@{OTHER}@{DIGEST}", ""), (DIGEST, ""), (f"{RAY}@{DIGEST.upper()}", ""),
])
def test_the_deny_key_is_the_digest_of_a_pinned_image_and_nothing_else(image: str, cut: str) -> None:
    match = CUT.fullmatch(kyverno.DIGEST_OF_IMAGE)
    assert match is not None and re.sub(match["pattern"], r"\1", image) == cut
