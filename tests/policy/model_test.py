"""What a policy is: its sidecar entries' matching and the rules it has on."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from pinguard.policy.model import Policy, Sidecar

PROXY = "docker.io/istio/proxyv2:1.22.0"
DIGEST = "sha256:" + "1" * 64
ISTIO = Sidecar("istio-proxy", "docker.io/istio/proxyv2:*")



@pytest.mark.parametrize(
    ("entry", "image", "allowed"),
    [
        (ISTIO, PROXY, True),
        (ISTIO, "istio/proxyv2:1.22.0", True),  # matched normalised
        (ISTIO, f"{PROXY}@{DIGEST}", True),  # and without its digest
        (ISTIO, "istio/proxyv2", True),  # a bare name pulls `latest`
        (ISTIO, "docker.io/evil/proxyv2:1.22.0", False),
        (ISTIO, "docker.io/istio/proxyv2-debug:1.22.0", False),
        (Sidecar("istio-proxy"), "anything.example/at/all:1", True),
        (Sidecar(image="istio/proxyv2:*"), PROXY, True),  # in Docker's short form
        (Sidecar(image="*/proxyv2@sha256:*"), f"istio/proxyv2@{DIGEST}", True),  # as the pod spec spells it
        (Sidecar("linkerd-*"), PROXY, False),
    ],
)
def test_a_sidecar_entry_matches_the_name_and_the_image(entry: Sidecar, image: str, allowed: bool) -> None:
    assert entry.allows("istio-proxy", image) is allowed


def test_enabled_rules_are_those_not_off_in_id_order_with_their_options() -> None:
    policy = Policy(rules={"b": {"level": "error"}, "a": {"level": "warning", "x": 1}, "c": {"level": "off"},
                           "unknown": {"level": "error"}})
    rules = [SimpleNamespace(ID=name, CONF={}, DEFAULT={}) for name in ("c", "b", "a")]
    assert [(rule.ID, dict(conf)) for rule, conf in policy.enabled(rules)] == [
        ("a", {"level": "warning", "x": 1}), ("b", {"level": "error"})]


def test_excluded_paths_match_the_globs() -> None:
    policy = Policy(rules={}, exclude=("vendor/*",))
    assert policy.excluded("vendor/pod.yaml")
    assert not policy.excluded("pods/vendor.yaml")
