"""A lock of 5,000 entries, each with two platform images, against pods of 1 to 100 containers, pinned and not.

The API server gives each expression a cost budget (`PER_CALL_LIMIT`); a policy whose
cost grew with the lock would deny valid pods of a large lock, or time out. Every
verdict here is the right one, and the cost of the costliest evaluation is the same as
against a lock of the few entries the pods name: it does not grow with the lock.

A lock of 20,000 entries fits no grid of name classes: its digests alone are split over
ranges, each ConfigMap within what etcd stores, and a denial names no entry.
"""
from __future__ import annotations

from typing import Any

import pytest

from pinguard.admission import params, vap
from pinguard.admission.objects import Source
from pinguard.lock.lockfile import Lock, LockEntry
from testing.lockdata import INDEX, locked_test_digest
from tests.admission.cel import PER_CALL_LIMIT
from tests.admission.helpers import admit, own, params_of, pod_spec

NAME = "registry.example.com/team-{team:02}/image-{i:04}"
ENTRIES = 5000
UNKNOWN = "sha256:" + "9" * 64
SETTINGS = (params.FROM, params.TO, params.CLASS, params.CLASSES, params.OMITTED)


def entry(index: int) -> LockEntry:
    name = NAME.format(team=index % 50, i=index)
    return LockEntry(name, "1.0", locked_test_digest(name, "1.0"), INDEX, 0, "other", None, "t",
                     {platform: locked_test_digest(name, platform) for platform in ("linux/amd64", "linux/arm64")})


ALL = [entry(index) for index in range(ENTRIES)]


def objects_of(entries: list[LockEntry]) -> list[dict[str, Any]]:
    return vap.objects(Source(Lock().with_entries(entries), "pinguard.lock", "0" * 64), (), "deny")


@pytest.fixture(scope="module")
def large() -> list[dict[str, Any]]:
    return objects_of(ALL)


def pod(images: list[str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": pod_spec(*((f"c{i}", image) for i, image in enumerate(images)))}


def pinned(entry_: LockEntry, which: int) -> str:
    digest = (entry_.digest, *entry_.platforms.values())[which % 3]
    return f"{entry_.name}:{entry_.tag}@{digest}"


def test_the_lock_is_split_over_configmaps_that_fit(large: list[dict[str, Any]]) -> None:
    cells = params_of(large)
    assert len(cells) > 1
    assert all(params.stored_size(cell) <= params.STORED_BUDGET for cell in cells)
    assert {digest for cell in cells for digest in cell["data"] if len(digest) == 64} == {
        digest.removeprefix("sha256:") for e in ALL for digest in (e.digest, *e.platforms.values())}


@pytest.mark.parametrize("count", [1, 10, 100])
def test_pods_of_up_to_100_containers_are_judged_right_and_at_a_cost_the_lock_s_size_does_not_change(
        large: list[dict[str, Any]], count: int) -> None:
    named = [ALL[(index * 997) % ENTRIES] for index in range(count)]  # spread over every cell
    small = objects_of(named)
    locked = pod([pinned(e, i) for i, e in enumerate(named)])
    tags = pod([f"{e.name}:{e.tag}" for e in named])
    wrong = [pinned(e, i) for i, e in enumerate(named)]
    wrong[count // 2] = f"{named[count // 2].name}:1.0@{UNKNOWN}"
    for images, refused in ((locked, None), (tags, "c0"), (pod(wrong), f"c{count // 2}")):
        verdicts = [admit(large, images), admit(small, images)]
        for verdict in verdicts:
            assert verdict.allowed is (refused is None)
            if refused is not None:
                assert all(_names_its_entry(message, named) for message in verdict.messages)
                assert any(message.startswith(f"container {refused}: ") for message in verdict.messages)
        assert verdicts[0].cost <= verdicts[1].cost * 1.05 + 50
        assert verdicts[0].cost < PER_CALL_LIMIT / 5


def _names_its_entry(message: str, named: list[LockEntry]) -> bool:
    container, _, rest = message.partition(": image `")
    index = int(container.removeprefix("container c"))
    return rest.endswith(f"pin it to {named[index].name}:1.0@{named[index].digest}")


@pytest.mark.parametrize("image", [
    "a.a/a" + "-" * 40 + "a:a",  # separators outnumber the letters' places: a name class below zero, were it
    "x.io/" + "/".join(["a"] * 30) + ":0",  # counted negative (CEL's `%` keeps the sign, as Go's does)
    "EVIL.example/Tools:LATEST",  # characters outside the alphabet
])
def test_an_image_whose_name_is_mostly_separators_is_judged_in_a_split_lock(
        large: list[dict[str, Any]], image: str) -> None:
    assert len(params_of(large)) > 1
    for refused in (image, image.split(":")[0] + ":a@" + UNKNOWN):
        verdict = admit(large, pod([refused]))
        assert not verdict.allowed and verdict.messages, refused


# --- a lock too large to name its entries in every cell ---

HUGE = 20_000
SAMPLED = range(0, HUGE, 67)  # 299 entries, spread over every range


@pytest.fixture(scope="module")
def huge() -> list[dict[str, Any]]:
    return objects_of([entry(index) for index in range(HUGE)])


def test_a_lock_of_20000_entries_is_split_over_ranges_of_digests_that_fit(huge: list[dict[str, Any]]) -> None:
    cells = params_of(huge)
    ranges = len(cells)
    assert 1 < ranges <= params.MAX_CELLS
    assert all(cell["metadata"]["labels"]["pinguard.dev/layout"] == f"{ranges}x1" for cell in cells)
    assert all(params.stored_size(cell) <= params.STORED_BUDGET for cell in cells)
    assert all(len(key) == 64 or key in SETTINGS for cell in cells for key in cell["data"])  # no name
    held = [digest for cell in cells for digest in cell["data"] if len(digest) == 64]
    assert len(held) == len(set(held)) == 3 * HUGE  # each digest in one cell
    bindings = [obj for obj in own(huge) if obj["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert len(bindings) == ranges * len([obj for obj in own(huge) if obj["kind"] == "ValidatingAdmissionPolicy"])


def test_each_entry_of_20000_is_admitted_and_a_foreign_digest_denied_in_one_cell_naming_no_entry(
        huge: list[dict[str, Any]]) -> None:
    sampled = [entry(index) for index in SAMPLED]
    small = objects_of(sampled[:100])
    for start in range(0, len(sampled), 100):
        named = sampled[start:start + 100]
        verdict = admit(huge, pod([pinned(e, i) for i, e in enumerate(named, start)]))
        assert verdict.allowed, verdict.messages
        assert verdict.cost <= admit(small, pod([pinned(e, i) for i, e in enumerate(named, start)])).cost * 1.05 + 50
    for e in sampled[::10]:
        for image in (f"{e.name}:{e.tag}@{locked_test_digest(e.name, 'foreign')}", f"{e.name}:{e.tag}"):
            verdict = admit(huge, pod([image]))
            # Judged in exactly one cell, which says the image is not pinned and names no entry, never a wrong one.
            assert verdict.messages == (f"container c0: image `{image}` is not pinned to a digest of the lock; "
                                        f"{vap.UNNAMED}",)
            assert not verdict.allowed and verdict.cost < PER_CALL_LIMIT / 5
