"""The kinds whose objects hold pod specs: the paths to them, and custom resources `--kind` adds."""
from __future__ import annotations

import re

import pytest

from pinguard.admission.workloads import BUILT_IN, EACH_ITEM, EACH_VALUE, PodSpecPath, custom, path
from pinguard.errors import PinguardError


@pytest.mark.parametrize(("spec", "message"), [
    ("TrainRun:spec", "not GROUP/VERSION/KIND[/PLURAL]:PATH"),
    ("example/v1/TrainRun:spec", "'example' is no API group"),
    ("example.com/v1/trainRun:spec", "'trainRun' is no API kind"),
    ("example.com/v1/TrainRun:spec.a[].b[]", "at most one `[]` or `*` a path"),
    ("example.com/v1/TrainRun:spec.in.x", "'in' is no field name"),
    ("example.com/v1/TrainRun:", "'' is no field name"),
    ("ray.io/v1/RayCluster:spec", "RayCluster of ray.io is already judged"),
])
def test_a_kind_no_resource_can_be_is_a_usage_error(spec: str, message: str) -> None:
    with pytest.raises(PinguardError, match=re.escape(message)):
        custom([spec])


def test_a_plural_is_guessed_as_kubectl_guesses_it_unless_given() -> None:
    plurals = [group.resources[0].plural for group in custom(
        ["a.io/v1/Policy:spec", "b.io/v1/Class:spec", "c.io/v1/Run:spec", "d.io/v1/Person/people:spec"])]
    assert plurals == ["policies", "classes", "runs", "people"]


@pytest.mark.parametrize(("text", "parsed"), [
    ("spec", PodSpecPath(("spec",))),
    ("spec.workerGroupSpecs[].template.spec",
     PodSpecPath(("spec", "workerGroupSpecs"), EACH_ITEM, ("template", "spec"))),
    ("spec.pytorchReplicaSpecs.*.template.spec", PodSpecPath(("spec", "pytorchReplicaSpecs"), EACH_VALUE,
                                                             ("template", "spec"))),
])
def test_a_path_reads_back_as_it_was_written(text: str, parsed: PodSpecPath) -> None:
    assert path(text) == parsed and str(parsed) == text


@pytest.mark.parametrize(("text", "message"), [
    ("*.spec", "at most one `[]` or `*` a path, after a field"),
    ("spec.a__b", "'a__b' is no field name"),
    ("spec.x-y", "'x-y' is no field name"),
])
def test_a_path_no_cel_expression_can_reach_is_refused(text: str, message: str) -> None:
    with pytest.raises(PinguardError, match=re.escape(message)):
        path(text)


def test_custom_kinds_are_judged_once_each_in_a_stable_order_with_names_of_their_own() -> None:
    first, second = custom(["z.io/v1/Run:spec.template.spec,spec.template.spec", "a.io/v1/Run:spec"])
    assert [g.resources[0].group for g in (first, second)] == ["a.io", "z.io"]
    assert second.paths == (path("spec.template.spec"),)  # a path named twice is one
    assert first.id != second.id and re.fullmatch(r"run[0-9a-f]{8}", first.id)
    assert first.id not in {group.id for group in BUILT_IN}
    with pytest.raises(PinguardError, match=r"Run of a\.io is already judged"):
        custom(["a.io/v1/Run:spec", "a.io/v1/Run/runz:spec.x"])
