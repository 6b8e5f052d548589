"""The FAKE API server's server-side apply (`testing.server_side_apply`): ownership, conflicts, merge, as the real one.

Tests that rest on the fake (`run --admission` and kubectl interleaved, prunes) are only as
good as this: a conflict the real API server raises must be raised here, worded alike.
"""
from __future__ import annotations

from typing import Any

import pytest

from testing.server_side_apply import Conflicts, apply, fields, managed_fields

POLICY: dict[str, Any] = {
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "p", "labels": {"a": "1"}},
    "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [{"resources": ["pods"]}]},
             "validations": [{"expression": "true"}], "variables": {}},
}


def test_fields_are_leaves_and_map_keys_lists_whole_and_never_the_identity() -> None:
    assert fields({**POLICY, "metadata": {**POLICY["metadata"], "uid": "u", "resourceVersion": "3"}}) == {
        ("metadata", "labels", "a"), ("spec", "failurePolicy"), ("spec", "matchConstraints", "resourceRules"),
        ("spec", "validations"), ("spec", "variables")}


def test_a_first_apply_creates_the_object_and_its_manager_owns_every_field() -> None:
    live, owners = apply(None, {}, POLICY, "pinguard", force=False)
    assert live == POLICY and owners == {"pinguard": fields(POLICY)}
    [entry] = managed_fields(owners, "admissionregistration.k8s.io/v1")
    assert (entry["manager"], entry["operation"], entry["fieldsType"]) == ("pinguard", "Apply", "FieldsV1")
    assert entry["fieldsV1"]["f:metadata"] == {"f:labels": {"f:a": {}}}
    assert entry["fieldsV1"]["f:spec"]["f:matchConstraints"] == {"f:resourceRules": {}}


def test_the_same_value_from_another_manager_is_shared_not_a_conflict() -> None:
    live, owners = apply(*apply(None, {}, POLICY, "pinguard", force=False), POLICY, "kubectl", force=False)
    assert live == POLICY and owners == {"pinguard": fields(POLICY), "kubectl": fields(POLICY)}


def test_another_value_for_a_field_another_manager_owns_is_refused_as_the_api_server_words_it() -> None:
    live, owners = apply(None, {}, POLICY, "kubectl", force=False)
    changed = {**POLICY, "spec": {**POLICY["spec"], "matchConstraints": {"resourceRules": []}}}
    with pytest.raises(Conflicts) as refused:
        apply(live, owners, changed, "pinguard", force=False)
    assert str(refused.value) == ('Apply failed with 1 conflict: conflict with "kubectl": '
                                  ".spec.matchConstraints.resourceRules")
    both = {**changed, "metadata": {"name": "p", "labels": {"a": "2"}}}
    with pytest.raises(Conflicts) as refused:
        apply(live, owners, both, "pinguard", force=False)
    assert str(refused.value) == ('Apply failed with 2 conflicts: conflicts with "kubectl":\n- .metadata.labels.a\n'
                                  "- .spec.matchConstraints.resourceRules")


def test_force_moves_the_field_to_the_applier() -> None:
    live, owners = apply(None, {}, POLICY, "kubectl", force=False)
    changed = {**POLICY, "spec": {**POLICY["spec"], "failurePolicy": "Ignore"}}
    live, owners = apply(live, owners, changed, "pinguard", force=True)
    assert live["spec"]["failurePolicy"] == "Ignore"
    assert ("spec", "failurePolicy") in owners["pinguard"] and ("spec", "failurePolicy") not in owners["kubectl"]
    with pytest.raises(Conflicts, match=r'conflict with "pinguard": \.spec\.failurePolicy$'):
        apply(live, owners, POLICY, "kubectl", force=False)  # kubectl now conflicts with pinguard


def test_a_field_no_longer_applied_goes_unless_another_manager_owns_it() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "kube-system"},
              "data": {"old": "1", "kept": "2"}}
    live, owners = apply(None, {}, config, "pinguard", force=False)
    newer = {**config, "data": {"kept": "2", "new": "3"}}
    live, owners = apply(live, owners, newer, "pinguard", force=False)
    assert live["data"] == {"kept": "2", "new": "3"}  # `old`, pinguard's alone, is gone
    live, owners = apply(live, owners, {**config, "data": {"kept": "2"}}, "kubectl", force=False)
    live, owners = apply(live, owners, {**config, "data": {"new": "3"}}, "pinguard", force=False)
    assert live["data"] == {"kept": "2", "new": "3"}  # kubectl still owns `kept`
    live, owners = apply(live, owners, {**config, "data": {"x": "4"}}, "pinguard", force=False)
    live, _ = apply(live, owners, {k: v for k, v in config.items() if k != "data"}, "kubectl", force=False)
    assert live["data"] == {"x": "4"}  # and `kept` went with kubectl's last claim on it
    live, _ = apply(live, {"pinguard": frozenset({("data", "x")})}, {**config, "data": {"y": "5"}}, "pinguard",
                    force=False)
    assert live["data"] == {"y": "5"}
