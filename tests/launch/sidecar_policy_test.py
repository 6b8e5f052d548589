"""The `sidecars:` section of a policy, which `run`'s watch and `audit` read: read in order, and validated once."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.policy.load import PolicyError, for_command, load
from pinguard.policy.model import Sidecar


def _policy(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_entries_are_read_in_order_and_extended_policies_come_first(tmp_path: Path) -> None:
    _policy(tmp_path, "sidecars:\n  - {name: linkerd-proxy}\n", "base.yaml")
    policy = load([_policy(tmp_path, 'extends: base.yaml\nsidecars:\n  - name: istio-proxy\n'
                                     '    image: "docker.io/istio/proxyv2:*"\n  - image: "hashicorp/vault:*"\n')])
    assert policy.sidecars == (Sidecar("linkerd-proxy"), Sidecar("istio-proxy", "docker.io/istio/proxyv2:*"),
                               Sidecar(image="hashicorp/vault:*"))


def test_no_sidecar_is_allowed_unless_a_policy_says_so() -> None:
    assert for_command([], "aws-dlc", project=False).sidecars == ()
    assert for_command([], project=False).sidecars == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sidecars: {name: istio-proxy}\n", "sidecars: expected a list"),
        ("sidecars: [istio-proxy]\n", "sidecars[0]: expected a mapping with `name`, `image` or both"),
        ("sidecars:\n  - {name: a}\n  - {}\n", "sidecars[1]: needs `name`, `image` or both: an empty entry would "
                                                "allow every container"),
        ("sidecars:\n  - {name: a, imag: b}\n", "sidecars[0]: unknown key 'imag' (known: name, image)"),
        ("sidecars:\n  - {name: [a]}\n", "sidecars[0].name: expected a glob pattern (a non-empty string), got ['a']"),
        ("sidecars:\n  - {image: ''}\n", "sidecars[0].image: expected a glob pattern (a non-empty string), got ''"),
        ("sidecars:\n  - {name: null}\n", "sidecars[0].name: expected a glob pattern"),
        ("sidecars:\n  - {1: a}\n", "sidecars[0].1: a key must be a name, not int"),
    ],
)
def test_invalid_sidecar_entries_name_the_entry(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(PolicyError) as raised:
        load([_policy(tmp_path, text)])
    assert str(raised.value).startswith(f"invalid policy {tmp_path / 'policy.yaml'}: ")
    assert message in str(raised.value)
