"""The FAKE Kubernetes API server's stored objects (`testing.fake_kube`): apply, lists, deletes, discovery, RBAC,
and its model of Kubernetes #130887, spoken to over HTTP as any client would."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from pinguard.admission import keepalive
from testing.fake_kube import APPLY_PATCH, FakeKube

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
CONFIGMAPS = "/api/v1/namespaces/kube-system/configmaps"


@pytest.fixture
def fake() -> Iterator[FakeKube]:
    with FakeKube() as started:
        yield started


def _path(obj: dict[str, Any]) -> str:
    if obj["kind"] == "ConfigMap":
        return f"/api/v1/namespaces/{obj['metadata']['namespace']}/configmaps/{obj['metadata']['name']}"
    plural = {"ValidatingAdmissionPolicy": "validatingadmissionpolicies",
              "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings"}[obj["kind"]]
    return f"{ADMISSION}/{plural}/{obj['metadata']['name']}"


def _apply(fake: FakeKube, obj: dict[str, Any], manager: str = "pinguard", force: bool = False) -> requests.Response:
    return requests.patch(fake.url + _path(obj), data=json.dumps(obj), headers={"Content-Type": APPLY_PATCH},
                          params={"fieldManager": manager, "force": str(force).lower()}, timeout=10)


def _configmap(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kube-system",
                                                                  "labels": labels}, "data": {"k": name}}


def test_apply_serves_managed_fields_and_a_conflict_as_a_status(fake: FakeKube) -> None:
    ka_configmap, ka_policy, _ = keepalive.objects()
    created = _apply(fake, ka_policy, manager="kubectl")
    assert created.status_code == 201
    assert [e["manager"] for e in created.json()["metadata"]["managedFields"]] == ["kubectl"]
    changed = {**ka_policy, "spec": {**ka_policy["spec"], "failurePolicy": "Fail"}}
    refused = _apply(fake, changed)
    assert refused.status_code == 409
    assert refused.json()["message"] == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.failurePolicy'
    assert refused.json()["details"]["causes"] == [
        {"type": "FieldManagerConflict", "message": 'conflict with "kubectl"', "field": ".spec.failurePolicy"}]
    forced = _apply(fake, changed, force=True)
    assert forced.status_code == 200 and forced.json()["spec"]["failurePolicy"] == "Fail"
    assert requests.get(fake.url + _path(ka_policy), timeout=10).json()["metadata"]["managedFields"][1]["manager"] == (
        "pinguard")
    assert requests.patch(fake.url + _path(ka_configmap), data=json.dumps(ka_configmap), timeout=10,
                          headers={"Content-Type": "application/merge-patch+json"},
                          params={"fieldManager": "x"}).status_code == 415


@pytest.mark.parametrize(("selector", "expected"), [
    ("a=1", ["one"]),
    ("a==1,b", ["one"]),
    ("a!=1", ["none", "two"]),
    ("a in (1, 2)", ["one", "two"]),
    ("a notin (1),b", ["two"]),
    ("!a", ["none"]),
    ("a", ["one", "two"]),
])
def test_lists_select_by_label_as_the_api_server_does(fake: FakeKube, selector: str, expected: list[str]) -> None:
    for name, labels in (("one", {"a": "1", "b": "x"}), ("two", {"a": "2", "b": "y"}), ("none", {})):
        assert _apply(fake, _configmap(name, labels)).ok
    listed = requests.get(fake.url + CONFIGMAPS, params={"labelSelector": selector}, timeout=10).json()
    assert (listed["kind"], [item["metadata"]["name"] for item in listed["items"]]) == ("ConfigMapList", expected)


def test_a_selector_that_does_not_parse_is_a_bad_request(fake: FakeKube) -> None:
    answer = requests.get(fake.url + CONFIGMAPS, params={"labelSelector": "a in 1"}, timeout=10)
    assert answer.status_code == 400 and answer.json()["reason"] == "BadRequest"


def test_delete_removes_and_a_field_selector_finds_by_name(fake: FakeKube) -> None:
    assert _apply(fake, _configmap("one", {})).ok
    named = requests.get(fake.url + "/api/v1/configmaps", params={"fieldSelector": "metadata.name=one"}, timeout=10)
    assert [item["metadata"]["namespace"] for item in named.json()["items"]] == ["kube-system"]
    assert requests.delete(fake.url + CONFIGMAPS + "/one", timeout=10).json()["status"] == "Success"
    assert requests.get(fake.url + CONFIGMAPS + "/one", timeout=10).status_code == 404
    assert fake.removed == [("configmaps", "kube-system", "one")]


def test_the_params_informer_dies_once_no_binding_reads_a_configmap(fake: FakeKube) -> None:
    configmap, policy, binding = keepalive.objects()
    for obj in (configmap, binding):
        assert _apply(fake, obj).ok
    assert fake.bindings_reading_params() == []  # a binding of no policy reads nothing: no informer yet
    assert _apply(fake, policy).ok
    assert fake.bindings_reading_params() == [keepalive.NAME]
    requests.delete(fake.url + _path(configmap), timeout=10)
    assert fake.informer_died is None  # the params may go: the informer runs while a binding needs it
    requests.delete(fake.url + _path(policy), timeout=10)
    assert fake.informer_died is not None and fake.informer_died.bare_path == _path(policy)
    assert _apply(fake, policy).ok and fake.informer_died.bare_path == _path(policy)  # and never comes back


def test_discovery_is_aggregated_when_asked_and_legacy_otherwise(fake: FakeKube) -> None:
    aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    answer = requests.get(fake.url + "/apis", headers={"Accept": aggregated}, timeout=10)
    assert answer.headers["Content-Type"].endswith("as=APIGroupDiscoveryList")
    groups = {item["metadata"]["name"]: item["versions"][0]["resources"] for item in answer.json()["items"]}
    assert {(r["resource"], r["scope"]) for r in groups["admissionregistration.k8s.io"]} == {
        ("validatingadmissionpolicies", "Cluster"), ("validatingadmissionpolicybindings", "Cluster")}
    assert requests.get(fake.url + "/api", timeout=10).json()["versions"] == ["v1"]
    listed = requests.get(fake.url + "/api/v1", timeout=10).json()
    assert {"name": "configmaps", "namespaced": True} in [{k: r[k] for k in ("name", "namespaced")}
                                                          for r in listed["resources"]]


def test_a_forbidden_resource_is_refused_as_rbac_words_it() -> None:
    with FakeKube(forbidden=["validatingadmissionpolicybindings"]) as fake:
        answer = requests.get(fake.url + f"{ADMISSION}/validatingadmissionpolicybindings", timeout=10)
        allowed = requests.get(fake.url + f"{ADMISSION}/validatingadmissionpolicies", timeout=10)
    assert answer.status_code == 403 and allowed.status_code == 200
    assert answer.json()["message"] == (
        "validatingadmissionpolicybindings.admissionregistration.k8s.io is forbidden: User "
        '"system:serviceaccount:team:auditor" cannot list resource "validatingadmissionpolicybindings" in API group '
        '"admissionregistration.k8s.io" at the cluster scope')
