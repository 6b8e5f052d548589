"""The exported objects as the API server takes them, for every version from 1.30 (VAP v1 GA) to the newest known.

`kubernetes-validate` holds the OpenAPI schemas (strict: no unknown fields). What the
schemas cannot say, the API server's own checks do, played here: names, label values
and ConfigMap keys with its rules; what a ConfigMap may hold (1 MiB of values) and what
etcd stores (1.5 MiB an object, managedFields and all); and the type checker, run on
every expression of every policy against every kind the policy matches.
"""
from __future__ import annotations

import json
import re
from typing import Any

import kubernetes_validate
import kubernetes_validate.utils
import pytest
from packaging.version import Version

from pinguard.admission import kyverno, params, vap
from pinguard.admission.objects import MODES, Source
from pinguard.errors import PinguardError
from pinguard.lock.lockfile import Lock, LockEntry
from testing.lockdata import INDEX, locked_test_digest
from tests.admission.helpers import RESOURCES, own, params_of
from tests.admission.typecheck import kind_type, type_errors

VERSIONS = sorted({v for v in kubernetes_validate.utils.all_versions() if Version(v) >= Version("1.30")}, key=Version)
SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
KIND_OF = {resource: kind for kind, (_, _, resource) in RESOURCES.items()}


def _lock(count: int = 3, platforms: int = 1) -> Lock:
    names = [("public.ecr.aws/deep-learning-containers/ray", "train-ml-cuda-v1.1"), ("docker.io/library/nginx", "1.25"),
             ("localhost:5000/team/app", "latest")] + [(f"registry.example.com/team/image-{i:05}", "v1.2.3")
                                                       for i in range(count - 3)]
    return Lock().with_entries(
        LockEntry(name, tag, locked_test_digest(name, tag), INDEX, 0, "other", None, "t",
                  {f"linux/p{p}": locked_test_digest(name, f"{tag} {p}") for p in range(platforms)})
        for name, tag in names)


SOURCE = Source(_lock(), "pinguard.lock", "0" * 64)
SCOPES = [(), ("team",), ("research", "team")]


def test_the_versions_run_from_1_30_to_the_newest_known() -> None:
    assert VERSIONS[0].startswith("1.30") and VERSIONS[-1] == kubernetes_validate.latest_version()


@pytest.fixture(params=[params.MAX_CELLS, 4], ids=["grid", "digests only"])
def split(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    """The objects of a lock split over several cells, bound to two namespaces: a grid of ranges and name classes, or
    (no grid of 4 cells fits) ranges of digests only."""
    monkeypatch.setattr(params, "STORED_BUDGET", 16 * 1024)
    monkeypatch.setattr(params, "MAX_CELLS", request.param)
    objects = vap.objects(Source(_lock(30), "pinguard.lock", "0" * 64), ("research", "team"), "warn")
    assert all((params.OMITTED in cell["data"]) is (request.param == 4) for cell in params_of(objects))
    return objects


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bound", SCOPES)
@pytest.mark.parametrize("mode", MODES)
def test_the_vap_objects_validate_strictly(version: str, bound: tuple[str, ...], mode: str) -> None:
    for obj in vap.objects(SOURCE, bound, mode):
        assert kubernetes_validate.validate(obj, version, strict=True) == ".".join(version.split(".")[:2])


@pytest.mark.parametrize("version", VERSIONS)
def test_the_objects_of_a_split_lock_validate_strictly(split: list[dict[str, Any]], version: str) -> None:
    assert len(params_of(split)) > 1
    for obj in split:
        kubernetes_validate.validate(obj, version, strict=True)


@pytest.mark.parametrize("bound", SCOPES)
def test_what_the_api_server_checks_beyond_the_schema(bound: tuple[str, ...]) -> None:
    _beyond_the_schema(vap.objects(SOURCE, bound, "deny"))


def test_what_the_api_server_checks_beyond_the_schema_of_a_split_lock(split: list[dict[str, Any]]) -> None:
    _beyond_the_schema(split)


def _beyond_the_schema(objects: list[dict[str, Any]]) -> None:
    names = [(obj["kind"], obj["metadata"]["name"]) for obj in objects]
    assert len(set(names)) == len(names)
    for obj in objects:
        name = obj["metadata"]["name"]
        assert SUBDOMAIN.fullmatch(name) and len(name) <= 253
        assert all(LABEL_VALUE.fullmatch(v) and len(v) <= 63 for v in obj["metadata"]["labels"].values())
    configmaps = {obj["metadata"]["name"]: obj for obj in params_of(objects)}
    policies = {obj["metadata"]["name"]: obj for obj in own(objects) if obj["kind"] == "ValidatingAdmissionPolicy"}
    for configmap in configmaps.values():
        assert configmap["metadata"]["namespace"] == "kube-system"
        assert all(CONFIGMAP_KEY.fullmatch(key) and len(key) <= 253 and not key.startswith("..")
                   for key in configmap["data"])
        assert all(isinstance(value, str) for value in configmap["data"].values())
    for policy in policies.values():
        assert policy["spec"]["paramKind"] == {"apiVersion": "v1", "kind": "ConfigMap"}
        assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v["name"]) for v in policy["spec"]["variables"])
    bindings = [obj for obj in own(objects) if obj["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert len(bindings) == len(policies) * len(configmaps)  # each policy reads each cell
    assert {(b["spec"]["policyName"], b["spec"]["paramRef"]["name"]) for b in bindings} == {
        (policy, configmap) for policy in policies for configmap in configmaps}
    assert all(b["spec"]["paramRef"]["namespace"] == "kube-system" and b["spec"]["paramRef"][
        "parameterNotFoundAction"] == "Deny" for b in bindings)


def test_a_binding_of_many_namespaces_keeps_valid_names() -> None:
    bound = tuple(f"team-{n:03}-{'x' * 50}" for n in range(10))
    objects = own(vap.objects(SOURCE, bound, "deny"))
    assert all(re.fullmatch(r"pinguard-lock(-[a-z0-9]+)?\.[0-9a-f]{16}", obj["metadata"]["name"]) for obj in objects)
    assert all(LABEL_VALUE.fullmatch(v) and len(v) <= 63 for obj in objects for v in obj["metadata"]["labels"].values())
    binding = next(obj for obj in objects if obj["kind"] == "ValidatingAdmissionPolicyBinding")
    assert binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"] == list(bound)


def stored(configmap: dict[str, Any], managers: int = 2) -> bytes:
    """The ConfigMap as the API server hands it to etcd after server-side apply by `managers` field managers, in
    JSON (etcd stores protobuf, which is smaller): its metadata filled in and each manager's managedFields listing
    every key of the data, as server-side apply does."""
    fields = {"f:data": {".": {}, **{f"f:{key}": {} for key in configmap["data"]}}, "f:metadata": {
        "f:annotations": {".": {}, **{f"f:{key}": {} for key in configmap["metadata"]["annotations"]}},
        "f:labels": {".": {}, **{f"f:{key}": {} for key in configmap["metadata"]["labels"]}}}}
    metadata = {**configmap["metadata"], "uid": "0" * 8 + "-0000-0000-0000-" + "0" * 12,
                "resourceVersion": "18446744073709551615", "creationTimestamp": "2026-11-30T00:00:00Z",
                "managedFields": [{"manager": f"manager-{n}", "operation": "Apply", "apiVersion": "v1",
                                   "time": "2026-11-30T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields}
                                  for n in range(managers)]}
    return json.dumps({**configmap, "metadata": metadata}, separators=(",", ":")).encode()


def test_each_configmap_fits_what_the_api_server_and_etcd_take() -> None:
    """5,000 entries with two platform images each: the API server's 1 MiB of values, etcd's 1.5 MiB an object."""
    source = Source(_lock(5000, platforms=2), "a/rather/long/path/to/the/pinguard.lock", "0" * 64)
    configmaps = params_of(vap.objects(source, ("team",), "deny"))
    assert len(configmaps) > 1
    assert params.STORED_BUDGET < params.VALUES_LIMIT < params.ETCD_LIMIT
    for configmap in configmaps:
        assert len(stored(configmap)) <= params.stored_size(configmap) <= params.STORED_BUDGET
        assert sum(len(value.encode()) for value in configmap["data"].values()) <= params.VALUES_LIMIT


def test_a_lock_too_large_for_any_layout_is_refused_with_what_its_digests_need(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(params, "MAX_CELLS", 2)
    with pytest.raises(PinguardError, match=r"^pinguard.lock: the lock's 10,000 digests do not fit in admission "
                                            r"params: each costs 216 bytes .* so they need at least 3 ConfigMaps, "
                                            r"more than the 2 .*\(etcd stores at most 1536 KiB an object\)"):
        vap.objects(Source(_lock(5000, platforms=1), "pinguard.lock", "0" * 64), (), "deny")


@pytest.mark.parametrize("version", VERSIONS)
def test_every_expression_type_checks_against_every_kind_its_policy_matches(version: str) -> None:
    checked = set()
    for policy in (obj for obj in own(vap.objects(SOURCE, (), "deny")) if obj["kind"] == "ValidatingAdmissionPolicy"):
        for rule in policy["spec"]["matchConstraints"]["resourceRules"]:
            for resource in (r for r in rule["resources"] if "/" not in r):
                assert type_errors(policy, kind_type(KIND_OF[resource], version), version) == []
                checked.add(KIND_OF[resource])
    assert checked == set(RESOURCES)


@pytest.mark.parametrize(("kind", "expression", "error"), [
    ("Pod", "has(object.spec.template)", "undefined field 'template' of Pod.spec"),
    ("Deployment", "object.spec.containers", "undefined field 'containers' of Deployment.spec"),
    ("Pod", "object.spec.initContainers + object.spec.containers",
     "+: no overload for Pod.spec.initContainers.@idx and Pod.spec.containers.@idx"),
    ("RayCluster", "[object.spec.headGroupSpec.template.spec] + object.spec.workerGroupSpecs.map(w, w.template.spec)",
     "+: no overload for RayCluster.spec.headGroupSpec.template.spec and "
     "RayCluster.spec.workerGroupSpecs.@idx.template.spec"),
    ("Pod", "object.spec.containers.exists(c, c.image.matches(1))", "matches(): a int, not a string"),
    ("Pod", "variables.undefined", "undefined field 'undefined' of variables"),
])
def test_the_type_checker_finds_what_the_api_server_s_does(kind: str, expression: str, error: str) -> None:
    policy = {"spec": {"variables": [{"name": "v", "expression": expression}],
                       "validations": [{"expression": "true", "messageExpression": "'x'"}]}}
    assert f"v: {error}" in type_errors(policy, kind_type(kind, VERSIONS[0]), VERSIONS[0])


def test_the_kyverno_policy_is_a_kubernetes_object() -> None:
    [policy] = kyverno.objects(SOURCE, (), "deny")
    assert SUBDOMAIN.fullmatch(policy["metadata"]["name"])
    assert set(policy) == {"apiVersion", "kind", "metadata", "spec"}
