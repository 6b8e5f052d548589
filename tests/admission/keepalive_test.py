"""The keepalive (Kubernetes #130887): in every export, the same, never selected by a delete pinguard prints,
and unable to deny anything; every command a header prints applies as the field manager `pinguard`."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from pinguard.admission import keepalive
from pinguard.admission.export import render
from pinguard.admission.objects import Source
from pinguard.lock.lockfile import Lock, LockEntry
from testing.lockdata import INDEX, locked_test_digest

SCOPES = [(), ("team-a",), ("team-a", "team-b")]


def source(count: int) -> Source:
    entries = [LockEntry(f"r.example/i{i}", "1", locked_test_digest("i", str(i)), INDEX, 0, "other", None, "t",
                         {"linux/amd64": locked_test_digest("amd64", str(i))}) for i in range(count)]
    return Source(Lock().with_entries(entries), "pinguard.lock", "0" * 64)


def exported(bound: tuple[str, ...], fmt: str = "vap") -> tuple[list[dict[str, Any]], list[str]]:
    text = render(source(3), fmt, bound, "deny")
    return list(yaml.safe_load_all(text)), re.findall(r"`(kubectl [^`]+)`", text)


def selects(selector: str, labels: Mapping[str, str]) -> bool:
    """A selector of `key=value` and `key!=value` terms, as kubectl reads one."""
    for term in selector.split(","):
        key, operator, value = re.fullmatch(r"([^!=]+)(!?=)(.*)", term).groups()  # type: ignore[union-attr]
        if (labels.get(key) == value) != (operator == "="):
            return False
    return True


@pytest.mark.parametrize("bound", SCOPES)
def test_every_export_begins_with_the_same_keepalive(bound: tuple[str, ...]) -> None:
    objects, _ = exported(bound)
    assert objects[:3] == keepalive.objects()
    assert [obj["kind"] for obj in objects[:3]] == ["ConfigMap", "ValidatingAdmissionPolicy",
                                                    "ValidatingAdmissionPolicyBinding"]
    assert all(obj["metadata"]["name"] == keepalive.NAME for obj in objects[:3])
    assert not any(obj["metadata"]["name"] == keepalive.NAME for obj in objects[3:])


@pytest.mark.parametrize("bound", SCOPES)
def test_no_delete_a_header_prints_selects_the_keepalive_or_another_scope(bound: tuple[str, ...]) -> None:
    objects, commands = exported(bound)
    deletes = [command for command in commands if command.startswith("kubectl delete")]
    prune = next(command for command in commands if "&& kubectl delete" in command)
    deletes.append(prune.partition("&& ")[2])
    others = [obj for other in SCOPES if other != bound for obj in exported(other)[0][3:]]
    assert len(deletes) == 2  # the removal, and the prune after the apply
    for command in deletes:
        selector = re.search(r"-l '([^']+)'", command)[1]  # type: ignore[index]
        assert not any(selects(selector, obj["metadata"]["labels"]) for obj in keepalive.objects())
        assert not any(selects(selector, obj["metadata"]["labels"]) for obj in others)
    removal = re.search(r"-l '([^']+)'", deletes[0])[1]  # type: ignore[index]
    assert all(selects(removal, obj["metadata"]["labels"]) for obj in objects[3:])  # the whole export goes


@pytest.mark.parametrize("fmt", ["vap", "kyverno"])
def test_every_apply_a_header_prints_is_the_field_manager_pinguard_taking_its_fields_back(fmt: str) -> None:
    _, commands = exported((), fmt)
    applies = [command for command in commands if command.startswith("kubectl apply")]
    assert applies
    assert all(" --server-side --field-manager=pinguard --force-conflicts -f " in command for command in applies)
    assert all(command.index("kubectl apply") < command.index("kubectl delete") for command in commands
               if "&&" in command)  # apply, then prune: never the other way round


def test_the_keepalive_can_deny_nothing() -> None:
    configmap, policy, binding = keepalive.objects()
    assert policy["spec"]["paramKind"] == {"apiVersion": "v1", "kind": "ConfigMap"}  # what keeps the informer
    assert binding["spec"]["paramRef"] == {"name": configmap["metadata"]["name"], "namespace": "kube-system",
                                           "parameterNotFoundAction": "Allow"}
    assert [validation["expression"] for validation in policy["spec"]["validations"]] == ["true"]
    assert policy["spec"]["failurePolicy"] == "Ignore"
    assert binding["spec"]["validationActions"] == ["Audit"]
    [rule] = policy["spec"]["matchConstraints"]["resourceRules"]
    assert (rule["resources"], rule["operations"]) == (["configmaps"], ["CREATE"])
    [selected] = binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"]
    assert (selected["operator"], selected["values"]) == ("In", [keepalive.NOWHERE])
