"""The exported objects validate against the Kubernetes schemas of every version from 1.30 (VAP v1 GA) to the newest.

`kubernetes-validate` holds the OpenAPI schemas (strict: no unknown fields). What the
schemas cannot say, the API server's own validation does: names, label values and
ConfigMap keys are checked here with its rules.
"""
from __future__ import annotations

import re

import kubernetes_validate
import kubernetes_validate.utils
import pytest
from packaging.version import Version

from pinguard.admission import MODES, Source, kyverno, vap
from pinguard.lockfile import Lock, LockEntry
from testing.lockdata import locked_test_digest

VERSIONS = sorted({v for v in kubernetes_validate.utils.all_versions() if Version(v) >= Version("1.30")}, key=Version)
SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _lock() -> Lock:
    names = [("public.ecr.aws/deep-learning-containers/ray", "train-ml-cuda-v1.1"), ("docker.io/library/nginx", "1.25"),
             ("localhost:5000/team/app", "latest")]
    return Lock().with_entries(
        LockEntry(name, tag, locked_test_digest(name, tag), "m", 0, "other", None, "t",
                  {"linux/amd64": locked_test_digest(name, tag + " amd64")}) for name, tag in names)


SOURCE = Source(_lock(), "pinguard.lock", "0" * 64)
SCOPES = [(), ("team",), ("research", "team")]


def test_the_versions_run_from_1_30_to_the_newest_known() -> None:
    assert VERSIONS[0].startswith("1.30") and VERSIONS[-1] == kubernetes_validate.latest_version()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bound", SCOPES)
@pytest.mark.parametrize("mode", MODES)
def test_the_vap_objects_validate_strictly(version: str, bound: tuple[str, ...], mode: str) -> None:
    for obj in vap.objects(SOURCE, bound, mode):
        assert kubernetes_validate.validate(obj, version, strict=True) == ".".join(version.split(".")[:2])


@pytest.mark.parametrize("bound", SCOPES)
def test_what_the_api_server_checks_beyond_the_schema(bound: tuple[str, ...]) -> None:
    params, policy, binding = vap.objects(SOURCE, bound, "deny")
    for obj in (params, policy, binding):
        name = obj["metadata"]["name"]
        assert SUBDOMAIN.fullmatch(name) and len(name) <= 253
        assert all(LABEL_VALUE.fullmatch(v) and len(v) <= 63 for v in obj["metadata"]["labels"].values())
    assert all(CONFIGMAP_KEY.fullmatch(key) and len(key) <= 253 for key in params["data"])
    assert all(isinstance(value, str) for value in params["data"].values())
    assert len(repr(params["data"])) < 1024 * 1024
    variables = [v["name"] for v in policy["spec"]["variables"]]
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) for name in variables)
    assert binding["spec"]["policyName"] == policy["metadata"]["name"]
    assert binding["spec"]["paramRef"] == {"name": params["metadata"]["name"], "namespace": "kube-system",
                                           "parameterNotFoundAction": "Deny"}
    assert policy["spec"]["paramKind"] == {"apiVersion": "v1", "kind": "ConfigMap"}


def test_a_binding_of_many_namespaces_keeps_a_valid_name() -> None:
    bound = tuple(f"team-{n:03}-{'x' * 50}" for n in range(10))
    params, _, binding = vap.objects(SOURCE, bound, "deny")
    assert binding["metadata"]["name"] == params["metadata"]["name"]
    assert re.fullmatch(r"pinguard-lock\.[0-9a-f]{16}", binding["metadata"]["name"])
    assert binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"] == list(bound)


def test_the_kyverno_policy_is_a_kubernetes_object() -> None:
    [policy] = kyverno.objects(SOURCE, (), "deny")
    assert SUBDOMAIN.fullmatch(policy["metadata"]["name"])
    assert set(policy) == {"apiVersion", "kind", "metadata", "spec"}

