"""The lock as the ConfigMaps the admission policies read: keys a policy can look up, split over cells that fit."""
from __future__ import annotations

import re

import pytest

from pinguard.admission import params
from pinguard.admission.objects import Source
from pinguard.admission.params import CLASS, CLASSES, FROM, OMITTED, TO, Layout, cells, entry_name, key, name_class
from pinguard.errors import PinguardError
from pinguard.lock.lockfile import Lock, LockEntry
from testing.lockdata import INDEX, locked_test_digest


def _entry(name: str, tag: str = "1.0") -> LockEntry:
    return LockEntry(name, tag, locked_test_digest(name, tag), INDEX, 0, "other", None, "t",
                     {"linux/amd64": locked_test_digest(name, "amd64")})


def _source(*entries: LockEntry) -> Source:
    return Source(Lock().with_entries(list(entries)), "pinguard.lock", "0" * 64)


def test_a_name_is_written_as_the_policy_writes_it_and_keyed_in_characters_a_key_holds() -> None:
    assert entry_name(_entry("nginx", "1.25"), "pinguard.lock") == "docker.io/library/nginx:1.25"
    assert key("docker.io/library/nginx:1.25") == "docker.io_slibrary_snginx_c1.25"
    assert key("a_s/b") == "a__s_sb" != key("a/s_b")  # `_` escaped first: no two names share a key
    with pytest.raises(PinguardError, match=r"^pinguard\.lock: nginx:1\.25@sha256:.*is no tag"):
        entry_name(_entry("nginx", "1.25@" + "sha256:" + "a" * 64), "pinguard.lock")


def test_a_names_class_counts_only_letters_and_digits_so_cel_and_python_agree() -> None:
    assert name_class("ab", 2) == (1 + 2) % 2
    assert name_class("a/-.:b", 100) == 3  # other characters count nothing, so the sum is never negative
    assert name_class("z9", 7) == (26 + 36) % 7


def test_a_small_lock_is_one_configmap_keyed_by_digest_and_by_name() -> None:
    nginx, redis = _entry("nginx"), _entry("ghcr.io/acme/redis")
    (cell,) = cells(_source(nginx, redis))
    assert cell.layout == Layout(1, 1) and cell.id == ""
    digests = {digest.removeprefix("sha256:") for entry in (nginx, redis)
               for digest in (entry.digest, *entry.platforms.values())}
    assert cell.data == {**dict.fromkeys(digests, ""), "docker.io_slibrary_snginx_c1.0": nginx.digest[7:],
                         "ghcr.io_sacme_sredis_c1.0": redis.digest[7:], FROM: "00", TO: "ff", CLASS: "0",
                         CLASSES: "1"}


def test_a_large_lock_is_split_so_each_container_is_judged_in_the_one_cell_holding_its_entry(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(params, "STORED_BUDGET", 24 * 1024)
    entries = [_entry(f"team/app-{index}") for index in range(60)]
    split = cells(_source(*entries))
    layout = split[0].layout
    assert len(split) == layout.ranges * layout.classes > 1
    assert {cell.id for cell in split} == {f"{r}-{c}-of-{layout}" for r in range(layout.ranges)
                                           for c in range(layout.classes)}
    for entry in entries:
        name, hex_ = entry_name(entry, "pinguard.lock"), entry.digest[7:]
        holding = [cell for cell in split if cell.data[FROM] <= hex_[:2] <= cell.data[TO]
                   and cell.data[CLASS] == str(name_class(name, layout.classes))]
        assert len(holding) == 1 and holding[0].data[key(name)] == hex_ and hex_ in holding[0].data
    for cell in split:
        configmap = {"metadata": {"name": f"pinguard-{cell.id}", "namespace": "pinguard-system"}, "data": cell.data}
        assert params.stored_size(configmap) <= params.STORED_BUDGET


def test_two_entries_of_one_image_are_refused() -> None:
    same = r"^pinguard\.lock: docker\.io/library/nginx:1\.0 and nginx:1\.0 are the same image: keep one$"
    with pytest.raises(PinguardError, match=same):
        cells(_source(_entry("nginx"), _entry("docker.io/library/nginx")))


def test_a_lock_whose_names_fit_no_grid_is_split_over_ranges_of_digests_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(params, "STORED_BUDGET", 24 * 1024)
    monkeypatch.setattr(params, "MAX_CELLS", 4)  # no grid of 4 holds both; the digests alone fit in a few ranges
    entries = [_entry(f"team/app-{index}") for index in range(60)]
    split = cells(_source(*entries))
    layout = split[0].layout
    assert (layout.classes, layout.names) == (1, False) and 1 < layout.ranges <= 4
    assert params.layout_of(_source(*entries)) == layout
    assert [cell.id for cell in split] == [f"{r}-0-of-{layout.ranges}x1" for r in range(layout.ranges)]
    digests = {d.removeprefix("sha256:") for e in entries for d in (e.digest, *e.platforms.values())}
    for cell in split:  # its settings as a grid's cell of one class says them, no name, every digest of its range
        assert {k: cell.data[k] for k in (FROM, TO, CLASS, CLASSES, OMITTED)} == {
            FROM: cell.data[FROM], TO: cell.data[TO], CLASS: "0", CLASSES: "1", OMITTED: "true"}
        assert set(cell.data) - {FROM, TO, CLASS, CLASSES, OMITTED} == {
            d for d in digests if cell.data[FROM] <= d[:2] <= cell.data[TO]}
        configmap = {"metadata": {"name": f"pinguard-{cell.id}", "namespace": "pinguard-system"}, "data": cell.data}
        assert params.stored_size(configmap) <= params.STORED_BUDGET


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.mark.parametrize(("entries", "cap"), [(40, 2), (40, 4)])
def test_a_lock_too_large_is_refused_in_numbers_that_add_up(monkeypatch: pytest.MonkeyPatch, entries: int,
                                                            cap: int) -> None:
    monkeypatch.setattr(params, "STORED_BUDGET", 12 * 1024)
    monkeypatch.setattr(params, "MAX_CELLS", cap)
    source = _source(*(_entry(f"team/app-{index}") for index in range(entries)))
    with pytest.raises(PinguardError) as refused:
        cells(source)
    message = str(refused.value)
    n = r"([\d,]+)"
    found = re.fullmatch(
        rf"pinguard\.lock: the lock's {n} digests do not fit in admission params: each costs {n} bytes as etcd "
        rf"stores it \({n} for its key in the data, and {n} again in each of {n} field managers' managedFields\), "
        rf"{n} KiB in all; a ConfigMap of at most 12 KiB \({n} bytes, {n} of them metadata and settings\) holds {n}, "
        rf"so they need at least {n} ConfigMaps, (.*) \(etcd stores at most 1536 KiB an object\): lock fewer images, "
        r"or export a lock for each part of the cluster", message)
    assert found, message
    digests, each, in_data, per_manager, managers, total_kib, budget, overhead, held, needed = (
        _number(found[n]) for n in range(1, 11))
    assert digests == 2 * entries and in_data == per_manager == 64 + 8 and each == in_data + managers * per_manager
    assert total_kib == digests * each // 1024 and budget == 12 * 1024
    assert held == (budget - overhead) // each
    assert needed == -(-digests // held)
    if needed > cap:  # more ConfigMaps than the cap, or split by their first two digits, a range holding too many
        assert found[11] == f"more than the {cap} ConfigMaps pinguard writes at most"
    else:
        fullest = re.fullmatch(rf"and split by their first two hex digits over {cap} ConfigMaps, the fullest holds "
                               rf"{n}, more than {held:,}", found[11])
        assert fullest and _number(fullest[1]) > held
