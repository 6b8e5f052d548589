"""The names and labels every exported object shares: valid Kubernetes names, one per scope, hashed past the limits."""
from __future__ import annotations

import pytest

from pinguard.admission.objects import (
    COMPONENT,
    MANAGED_BY,
    NAME,
    POLICY_COMPONENT,
    SCOPE_LABEL,
    labels,
    namespaces,
    object_name,
    scope_name,
)
from pinguard.errors import PinguardError


def test_namespaces_are_sorted_and_once_each() -> None:
    assert namespaces(["serving", "ml", "serving"]) == ("ml", "serving")
    assert namespaces([]) == ()


@pytest.mark.parametrize("bad", ["", "ML", "team_a", "-ml", "ml-", "a.b", "x" * 64])
def test_a_name_no_namespace_can_have_is_a_usage_error(bad: str) -> None:
    with pytest.raises(PinguardError, match="not a namespace name"):
        namespaces(["ml", bad])


def test_the_scope_names_every_namespace_bound_or_none() -> None:
    assert scope_name(()) == NAME
    assert scope_name(("ml", "serving")) == f"{NAME}.ml.serving"


def test_past_253_characters_a_hash_stands_in_for_the_namespaces() -> None:
    many = [f"team-{n:03}" for n in range(40)]
    name = object_name(NAME, many)
    assert len(name) <= 253 and name.startswith(f"{NAME}.") and "team-000" not in name
    assert object_name(NAME, many[1:]) != name  # another set of namespaces, another name


def test_labels_say_who_manages_the_object_and_its_scope() -> None:
    assert labels(POLICY_COMPONENT, ("ml",)) == {MANAGED_BY[0]: MANAGED_BY[1], COMPONENT: POLICY_COMPONENT,
                                                 SCOPE_LABEL: f"{NAME}.ml"}


def test_a_scope_longer_than_a_label_value_is_hashed() -> None:
    bound = ("a" * 30, "b" * 30)
    scope = labels(POLICY_COMPONENT, bound)[SCOPE_LABEL]
    assert len(scope) <= 63 and scope != scope_name(bound) and scope.startswith(f"{NAME}.")
