"""pinguard's admission bindings judged (`pinguard.launch.bindings`): params missing, the keepalive gone, any shape."""
from __future__ import annotations

from typing import Any

import pytest

from pinguard.admission import keepalive
from pinguard.launch.bindings import KIND, SELECTOR, Checked, check, problems

KEEPALIVE = keepalive.objects()[2]


def binding(name: str, params: Any, action: str = "Deny") -> dict[str, Any]:
    return {"kind": KIND, "metadata": {"name": name},
            "spec": {"policyName": "p", "paramRef": {"name": params, "namespace": "kube-system",
                                                     "parameterNotFoundAction": action}}}


class Cluster:
    """A stand-in for `cluster.Kube`: the bindings it lists, the ConfigMaps it has; what it was asked."""

    def __init__(self, found: list[dict[str, Any]], configmaps: set[tuple[str, str]]) -> None:
        self.found, self.configmaps, self.asked = found, configmaps, []

    def listed(self, kind: str, namespace: str | None = None, selector: str | None = None) -> list[dict[str, Any]]:
        self.asked.append((kind, namespace, selector))
        return self.found

    def has_config_map(self, namespace: str, name: str) -> bool:
        self.asked.append(("ConfigMap", namespace, name))
        return (namespace, name) in self.configmaps


def test_each_binding_whose_params_are_missing_is_reported_and_each_configmap_read_once() -> None:
    cluster = Cluster([binding("a", "cm-1"), binding("b", "cm-1"), binding("c", "cm-2"), KEEPALIVE],
                      {("kube-system", "cm-2")})
    checked = check(cluster)
    assert [(p.binding, p.problem) for p in checked.problems] == [("a", "admission-params"), ("b", "admission-params")]
    assert checked.bindings == 4
    assert str(checked.problems[0]) == (
        "ValidatingAdmissionPolicyBinding a: its params, ConfigMap kube-system/cm-1, do not exist: every pod it "
        "matches is denied; apply its export again [admission-params]")
    assert cluster.asked == [(KIND, None, SELECTOR), ("ConfigMap", "kube-system", "cm-1"),
                             ("ConfigMap", "kube-system", "cm-2")]


def test_the_keepalive_is_missed_only_where_pinguard_has_bindings() -> None:
    assert check(Cluster([], set())) == Checked(0, [])
    [missed] = problems([binding("a", "cm")], set())
    assert (missed.binding, missed.problem) == (keepalive.NAME, "admission-keepalive")
    assert problems([binding("a", "cm"), KEEPALIVE], set()) == []


def test_a_binding_that_allows_missing_params_is_no_problem() -> None:
    """The keepalive's own ConfigMap may go: its binding allows, and still keeps the informer running."""
    cluster = Cluster([KEEPALIVE, binding("a", "cm", action="Allow")], set())
    assert check(cluster).problems == [] and cluster.asked == [(KIND, None, SELECTOR)]


@pytest.mark.parametrize("body", [
    {}, {"metadata": "x"}, {"metadata": {"name": 3}, "spec": {"paramRef": {"name": "cm"}}},
    {"spec": []}, {"spec": {"paramRef": "x"}}, binding("a", None), binding("a", ["cm"]), binding("a", ""),
    {"metadata": {"name": "s"}, "spec": {"paramRef": {"selector": {}, "namespace": "kube-system"}}},
])
def test_a_binding_of_any_shape_is_judged_without_failing(body: dict[str, Any]) -> None:
    assert check(Cluster([body, KEEPALIVE], set())).problems == []


def test_what_the_server_names_is_shown_as_text() -> None:
    [reported] = problems([binding("evil\x1b[2J", "cm\nx"), KEEPALIVE], {("kube-system", "cm\nx")})
    assert "\x1b" not in str(reported) and "\n" not in str(reported)
