"""Exports on one cluster: applied, updated and deleted in any order; a lock split over cells; custom kinds.

A `Cluster` holds objects by kind, namespace and name, as the API server does: applying
an object replaces the one of its name, `kubectl delete -f` removes the file's objects,
and `kubectl delete -l` those its label selector selects. What a file's header says to
run is run as it says. Small locks are split over cells by a small `STORED_BUDGET`, so
every way a container can fall across cells is tried quickly.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest
import yaml

from pinguard.admission import keepalive, params, vap
from pinguard.admission.export import render
from pinguard.admission.objects import Source
from pinguard.admission.workloads import custom
from pinguard.lock.lockfile import Lock, LockEntry
from testing.lockdata import INDEX, locked_test_digest
from tests.admission.helpers import RESOURCES, admit, own, params_of, pod_spec
from tests.admission.typecheck import kind_type, type_errors

NAME = "registry.example.com/a-rather-long-team-name/and-a-long-image-name-{i:03}"
OTHER = "sha256:" + "b" * 64
Key = tuple[str, str, str]


def entry(index: int, tag: str = "v1", platforms: int = 1) -> LockEntry:
    name = NAME.format(i=index)
    return LockEntry(name, tag, locked_test_digest(name, tag), INDEX, 0, "other", None, "t",
                     {f"linux/p{p}": locked_test_digest(name, f"{tag} p{p}") for p in range(platforms)})


def lock(count: int, tag: str = "v1") -> Lock:
    return Lock().with_entries(entry(index, tag) for index in range(count))


def source(of: Lock) -> Source:
    return Source(of, "pinguard.lock", "0" * 64)


class Cluster:
    """The objects a cluster holds, by (kind, namespace, name)."""

    def __init__(self) -> None:
        self.objects: dict[Key, Mapping[str, Any]] = {}

    @staticmethod
    def key(obj: Mapping[str, Any]) -> Key:
        return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]

    def apply(self, objects: Iterable[Mapping[str, Any]]) -> None:
        for obj in objects:
            self.objects[self.key(obj)] = obj

    def delete(self, objects: Iterable[Mapping[str, Any]]) -> None:
        for obj in objects:
            self.objects.pop(self.key(obj), None)

    def run(self, command: str, file: Iterable[Mapping[str, Any]]) -> None:
        """`kubectl apply … -f FILE` (of `file`) and `kubectl delete validatingadmissionpolicybindings,configmaps -n NS
        -l SELECTOR`, joined by `&&`, as a header writes them."""
        for part in command.split(" && "):
            if part.startswith("kubectl apply ") and part.endswith(" -f FILE"):
                self.apply(file)
            else:
                self._delete_selected(part)

    def _delete_selected(self, command: str) -> None:
        found = re.fullmatch(r"kubectl delete validatingadmissionpolicybindings,configmaps -n (\S+) -l '([^']+)'",
                             command)
        assert found, command
        namespace, selector = found.groups()
        for key, obj in list(self.objects.items()):
            if key[0] == "ValidatingAdmissionPolicyBinding" or key[:2] == ("ConfigMap", namespace):
                if _selects(selector, obj["metadata"].get("labels", {})):
                    del self.objects[key]

    def admit(self, image: str, namespace: str = "team-a") -> bool:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod_spec(("c", image))}
        return admit(list(self.objects.values()), pod, namespace=namespace).allowed


def _selects(selector: str, labels: Mapping[str, str]) -> bool:
    """A label selector of `key=value` and `key!=value` terms, as kubectl reads one."""
    for term in selector.split(","):
        key, operator, value = re.fullmatch(r"([^!=]+)(!?=)(.*)", term).groups()  # type: ignore[union-attr]
        if (labels.get(key) == value) != (operator == "="):
            return False
    return True


def exported(of: Lock, bound: Sequence[str] = ()) -> tuple[list[dict[str, Any]], list[str]]:
    """The objects of an export and the commands its header says to run when the lock changes (those that apply
    it again, not the one that removes it)."""
    text = render(source(of), "vap", bound, "deny")
    return list(yaml.safe_load_all(text)), re.findall(r"`(kubectl apply [^`]+)`", text)


def layout(objects: Sequence[Mapping[str, Any]]) -> str:
    [found] = {obj["metadata"]["labels"]["pinguard.dev/layout"] for obj in params_of(objects)}
    return str(found)


@pytest.fixture
def small_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget that splits a lock of 20 entries over a few cells, and one of 40 over more, in ranges and classes."""
    monkeypatch.setattr(params, "STORED_BUDGET", 16 * 1024)


SCOPES = [(), ("team-a",), ("team-b",)]


def test_exports_of_other_namespaces_share_no_object_but_the_keepalive() -> None:
    exports = [exported(lock(3), bound)[0] for bound in SCOPES]
    keys = [{Cluster.key(obj) for obj in own(objects)} for objects in exports]
    assert all(not a & b for a, b in itertools.combinations(keys, 2))
    assert all(objects[:3] == keepalive.objects() and len(own(objects)) == len(objects) - 3 for objects in exports)
    policies = {key[2] for keys_ in keys for key in keys_ if key[0] == "ValidatingAdmissionPolicy"}
    assert {"pinguard-lock-pods", "pinguard-lock-pods.team-a", "pinguard-lock-pods.team-b"} <= policies


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_deleting_an_export_in_any_order_leaves_the_others_enforcing(order: tuple[int, ...]) -> None:
    exports = [exported(lock(3), bound)[0] for bound in SCOPES]
    locked = f"{entry(0).name}:v1@{entry(0).digest}"
    cluster = Cluster()
    for index in order:
        cluster.apply(exports[index])
    left = set(range(3))
    for index in order:
        cluster.delete(exports[index])
        left.discard(index)
        for namespace in ("default", "team-a", "team-b"):
            bound = 0 in left or any(SCOPES[i] == (namespace,) for i in left)
            assert cluster.admit("busybox:1.36", namespace) is not bound, (namespace, left)
            assert cluster.admit(locked, namespace)


def test_a_new_lock_applied_as_each_header_says_reaches_each_namespace() -> None:
    cluster = Cluster()
    for bound in SCOPES[:2]:
        cluster.apply(exported(lock(3), bound)[0])
    moved = lock(3, "v2")
    for bound in SCOPES[:2]:
        objects, commands = exported(moved, bound)
        for command in commands:
            cluster.run(command, objects)
    for namespace in ("default", "team-a"):
        assert cluster.admit(f"{entry(0).name}:v2@{entry(0, 'v2').digest}", namespace)
        assert not cluster.admit(f"{entry(0).name}:v1@{entry(0).digest}", namespace)


@pytest.mark.usefixtures("small_cells")
@pytest.mark.parametrize(("before", "after"), [(20, 40), (40, 20)])
def test_a_change_of_layout_leaves_objects_the_header_s_command_deletes(before: int, after: int) -> None:
    old, new = exported(lock(before), ("team-a",)), exported(lock(after, "v2"), ("team-a",))
    assert layout(old[0]) != layout(new[0])
    cluster = Cluster()
    cluster.apply(old[0])
    cluster.apply(new[0])
    pinned = f"{entry(1).name}:v2@{entry(1, 'v2').digest}"
    assert not cluster.admit(pinned)  # the old layout's bindings still judge with the old digests
    for command in new[1]:
        cluster.run(command, new[0])
    assert cluster.admit(pinned) and not cluster.admit(f"{entry(1).name}:v1@{entry(1).digest}")
    assert {key[2].partition(".")[0] for key in cluster.objects if key[0] == "ConfigMap"} == {
        obj["metadata"]["name"].partition(".")[0] for obj in new[0] if obj["kind"] == "ConfigMap"}
    assert ("ConfigMap", "kube-system", keepalive.NAME) in cluster.objects


@pytest.mark.usefixtures("small_cells")
def test_a_missing_params_configmap_denies_everything() -> None:
    objects = exported(lock(20))[0]
    cells = params_of(objects)
    assert len(cells) > 1
    cluster = Cluster()
    cluster.apply(objects)
    locked = f"{entry(0).name}:v1@{entry(0).digest}"
    assert cluster.admit(locked)
    for cell in cells:
        cluster.delete([cell])
        assert not cluster.admit(locked)
        cluster.apply([cell])


@pytest.mark.usefixtures("small_cells")
def test_each_container_is_judged_in_one_cell_which_names_its_entry() -> None:
    of = lock(40)
    objects = vap.objects(source(of), (), "deny")
    ranges, _, classes = layout(objects).partition("x")
    assert int(ranges) > 1 and int(classes) > 1
    pods = {"tag only": "{name}:v1", "another digest": "{name}:v1@" + OTHER, "no digest but the tag's": "{name}"}
    chosen = list(of)[::2]
    for cell in (obj["data"] for obj in params_of(objects)):  # each cell judges some of them
        assert any(params.key(params.entry_name(e, "pinguard.lock")) in cell for e in chosen)
        assert any(e.digest.removeprefix("sha256:") in cell for e in chosen)
    for locked in chosen:
        for image in (f"{locked.name}@{locked.digest}", *(f"{locked.name}:v1@{d}" for d in locked.platforms.values())):
            assert admit(objects, _pod(image)).allowed
        for pattern in pods.values():
            verdict = admit(objects, _pod(pattern.format(name=locked.name)))
            assert len(verdict.messages) == 1 and not verdict.allowed
            if pattern != "{name}":
                assert verdict.message is not None and verdict.message.endswith(
                    f"pin it to {locked.name}:v1@{locked.digest}")
    verdict = admit(objects, _pod("busybox:1.36"))
    assert verdict.messages == ("container c: image `busybox:1.36` is not pinned to a digest of the lock; "
                                f"{vap.NO_ENTRY}",)


def _pod(*images: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": pod_spec(*((f"c{i}" if len(images) > 1 else "c", image) for i, image in enumerate(images)))}


@pytest.mark.usefixtures("small_cells")
def test_cells_of_two_locks_mixed_admit_no_digest_neither_holds() -> None:
    """Mid-update, some cells hold the new lock and some the old: each judges its own range, never another's."""
    old, new = lock(20), lock(20, "v2")
    old_objects, new_objects = vap.objects(source(old), (), "deny"), vap.objects(source(new), (), "deny")
    old_cells, new_cells = params_of(old_objects), params_of(new_objects)
    digests = {d for of in (old, new) for e in of for d in (e.digest, *e.platforms.values())}
    for chosen in itertools.product((0, 1), repeat=len(old_cells)):
        cluster = Cluster()
        cluster.apply(old_objects)
        cluster.apply(new_cells[i] for i, pick in enumerate(chosen) if pick)
        objects = list(cluster.objects.values())
        for digest in [*sorted(digests)[:6], OTHER, "sha256:" + "0" * 64, "sha256:" + "f" * 64]:
            verdict = admit(objects, _pod(f"{entry(0).name}@{digest}"))
            assert not verdict.allowed or digest in digests


def test_cells_of_digests_only_mixed_with_those_naming_entries_each_judge_their_range(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A lock grown past naming its entries, applied over one that named them: at 2 cells at most, 20 entries are
    2x1 naming entries in 20 KiB cells, and 2x1 of digests only in 16 KiB. Mixed, each cell judges its range."""
    monkeypatch.setattr(params, "MAX_CELLS", 2)
    monkeypatch.setattr(params, "STORED_BUDGET", 20 * 1024)
    old = vap.objects(source(lock(20)), (), "deny")
    monkeypatch.setattr(params, "STORED_BUDGET", 16 * 1024)
    new = vap.objects(source(lock(20, "v2")), (), "deny")
    assert layout(old) == layout(new) == "2x1"
    assert [params.OMITTED in cell["data"] for cell in (*params_of(old), *params_of(new))] == [False] * 2 + [True] * 2
    for chosen in itertools.product((0, 1), repeat=2):
        cluster = Cluster()
        cluster.apply(old)
        cluster.apply(cell for cell, pick in zip(params_of(new), chosen, strict=True) if pick)
        cells = [cell["data"] for cell in params_of(list(cluster.objects.values()))]
        for index in range(0, 20, 3):
            for tag in ("v1", "v2"):
                digest = entry(index, tag).digest.removeprefix("sha256:")
                [judging] = [cell for cell in cells if cell[params.FROM] <= digest[:2] <= cell[params.TO]]
                image = f"{entry(index).name}:{tag}@sha256:{digest}"
                verdict = admit(list(cluster.objects.values()), _pod(image))
                assert verdict.allowed is (digest in judging), (chosen, image)
                if not verdict.allowed:
                    said = vap.UNNAMED if params.OMITTED in judging else (  # the old lock names v1 only
                        f"pin it to {entry(index).name}:v1@" if tag == "v1" else vap.NO_ENTRY)
                    assert verdict.messages[0].split("; ", 1)[1].startswith(said)


TRAIN_RUN = "example.com/v1/TrainRun:spec.template.spec,spec.workers[].template.spec,spec.replicas.*.spec"


def train_run(**specs: Mapping[str, Any]) -> dict[str, Any]:
    """A TrainRun with a pod spec at each of its three paths: `template`, `workers`, `replicas`."""
    return {"apiVersion": "example.com/v1", "kind": "TrainRun", "metadata": {"name": "t"}, "spec": {
        "template": {"spec": specs["template"]}, "workers": [{"template": {"spec": specs["workers"]}}],
        "replicas": {"a": {"spec": specs["replicas"]}}}}


def test_a_custom_kind_is_judged_at_each_of_its_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(RESOURCES, "TrainRun", ("example.com", "v1", "trainruns"))
    objects = vap.objects(source(lock(2)), (), "deny", custom([TRAIN_RUN]))
    locked, unlocked = pod_spec(("c", f"{entry(0).name}:v1@{entry(0).digest}")), pod_spec(("c", "busybox:1.36"))
    places = ("template", "workers", "replicas")
    assert admit(objects, train_run(**dict.fromkeys(places, locked))).allowed
    for place in places:
        assert not admit(objects, train_run(**{p: unlocked if p == place else locked for p in places})).allowed
    assert admit(objects, {**train_run(**dict.fromkeys(places, locked)), "spec": {}}).allowed  # no pod spec
    [policy] = [obj for obj in objects if obj["kind"] == "ValidatingAdmissionPolicy" and "trainrun" in
                obj["metadata"]["name"]]
    assert policy["spec"]["matchConstraints"]["resourceRules"][0]["resources"] == ["trainruns"]
    pod_template = {"$ref": "#/$defs/io.k8s.api.core.v1.PodTemplateSpec"}
    schema = {"type": "object", "properties": {
        "template": pod_template, "workers": {"type": "array", "items": {"type": "object", "properties": {
            "template": pod_template}}},
        "replicas": {"type": "object", "additionalProperties": pod_template}}}
    assert type_errors(policy, kind_type("TrainRun", "1.30.0", schema), "1.30.0") == []
