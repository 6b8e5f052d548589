"""stale-admission as a truth table: exported admission objects in, findings (line, column, message part) out."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pinguard.admission import params, vap
from pinguard.admission.export import render
from pinguard.admission.objects import COMPONENT, PARAMS_COMPONENT, Source
from pinguard.findings import Finding
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.policy.rules import stale_admission
from testing.lockdata import INDEX, locked_test_digest
from tests.policy.helpers import assert_found, check_rule

RULE = "stale-admission"
RAY = "public.ecr.aws/deep-learning-containers/ray"
A, B = locked_test_digest(RAY, "a"), locked_test_digest(RAY, "b")
ARM = locked_test_digest(RAY, "a arm64")


def lock(*entries: tuple[str, str, dict[str, str]]) -> Lock:
    return Lock().with_entries(LockEntry(RAY, tag, digest, INDEX, 0, "other", None, "t", platforms)
                               for tag, digest, platforms in entries)


LOCK = lock(("a", A, {"linux/arm64": ARM}))
NAME_KEY = "public.ecr.aws_sdeep-learning-containers_sray_ca"  # the params key of `{RAY}:a`


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def exported(of: Lock, fmt: str = "vap", bound: Sequence[str] = ()) -> str:
    return render(Source(of, "pinguard.lock", "0" * 64), fmt, bound, "deny")


def at(text: str, part: str, after: str = "") -> tuple[int, int]:
    """The line and column where `part` first begins in `text` after `after` (searched with the line break before it,
    if given)."""
    before = text[:text.index(part, text.index(after)) + part.startswith("\n")]
    return before.count("\n") + 1, len(before) - before.rfind("\n")


CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: pinguard-lock
  labels: {app.kubernetes.io/managed-by: pinguard}
data:
  %s: the index
  %s: the arm64 image
"""


@pytest.mark.parametrize("bound", [(), ("team-a",), ("team-a", "team-b")])
def test_what_the_lock_exports_passes(tmp_path: Path, bound: tuple[str, ...]) -> None:
    for fmt in ("vap", "kyverno"):
        assert check_rule(tmp_path, RULE, {"admission.yaml": exported(LOCK, fmt, bound)}, lock=LOCK) == []


def test_a_configmap_pinguard_did_not_make_is_not_checked(tmp_path: Path) -> None:
    text = CONFIGMAP.replace("labels: {app.kubernetes.io/managed-by: pinguard}", "labels: {app: mine}")
    assert check_rule(tmp_path, RULE, {"cm.yaml": text % (B[7:], ARM[7:])}, lock=LOCK) == []


@pytest.mark.parametrize(("keys", "expected"), [
    ((A[7:], ARM[7:]), []),
    ((B[7:], ARM[7:]), [(6, 1, f"ConfigMap does not admit 1 digest that pinguard.lock holds: `{A}` ({RAY}:a)"),
                        (7, 3, f"ConfigMap admits `{B}`, which pinguard.lock does not hold")]),
    ((A[7:], "not-a-digest"), [(6, 1, f"does not admit 1 digest that pinguard.lock holds: `{ARM}` ({RAY}:a)"),
                               (8, 3, "ConfigMap names `not-a-digest`, which pinguard.lock has no entry for")]),
])
def test_digests_admitted_and_held(tmp_path: Path, keys: tuple[str, str], expected: list[tuple[int, int, str]]) -> None:
    found = check_rule(tmp_path, RULE, {"cm.yaml": CONFIGMAP % keys}, lock=LOCK)
    assert_found(found, expected, RULE)


def test_a_configmap_without_data_admits_nothing(tmp_path: Path) -> None:
    text = CONFIGMAP.split("\ndata:")[0] + "\n"
    found = check_rule(tmp_path, RULE, {"cm.yaml": text}, lock=LOCK)
    assert_found(found, [(1, 1, f"does not admit 2 digests that pinguard.lock holds: `{A}` ({RAY}:a), `{ARM}`")], RULE)


def test_a_kyverno_policy_is_told_once_per_problem_and_per_rule_that_differs(tmp_path: Path) -> None:
    old = exported(lock(("a", B, {})), "kyverno")
    found = check_rule(tmp_path, RULE, {"kyverno.yaml": old}, lock=LOCK)
    assert [f.message.split(":")[0] for f in found] == [
        "ClusterPolicy does not admit 2 digests that pinguard.lock holds", "ClusterPolicy admits `sha256"]
    fresh = exported(LOCK, "kyverno")
    rule = fresh[fresh.index("  - name: "):]
    assert fresh.count(f"- {ARM}") == 1 and rule.count("\n") == 37  # one rule, of lines 21 to 57
    # The rule hand-edited, then twice more: alike (told once), and otherwise (what differs is told).
    edited = fresh.replace(f"- {ARM}", f"- {B}") + rule.replace(f"- {ARM}", f"- {B}") + rule.replace(f"- {A}", f"- {B}")
    found = check_rule(tmp_path, RULE, {"kyverno.yaml": edited}, lock=LOCK)
    assert_found(found, [(56, 15, f"ClusterPolicy does not admit 1 digest that pinguard.lock holds: `{ARM}`"),
                         (57, 17, f"ClusterPolicy admits `{B}`"),
                         (56 + 2 * 37, 15, f"ClusterPolicy does not admit 1 digest that pinguard.lock holds: `{A}`")],
                 RULE)


def test_another_file_kind_is_not_read(tmp_path: Path) -> None:
    assert check_rule(tmp_path, RULE, {"values.yaml": CONFIGMAP % (B[7:], B[7:])}, lock=LOCK) == []


def test_a_namespaced_params_object_left_behind_is_found(tmp_path: Path) -> None:
    # Exported for team-a, then the lock moved the tag: the header says to apply this file again, and it was not.
    old = exported(lock(("a", B, {})), bound=("team-a",))
    assert "  name: pinguard-lock.team-a\n  namespace: kube-system\n" in old
    found = check_rule(tmp_path, RULE, {"admission.yaml": old}, lock=LOCK)
    line, column = at(old, f"{NAME_KEY}: ")
    assert_found(found, [
        (*at(old, "\ndata:", after=PARAMS_COMPONENT),
         f"ConfigMap does not admit 2 digests that pinguard.lock holds: `{A}` ({RAY}:a), `{ARM}`"),
        (*at(old, B[7:]), f"ConfigMap admits `{B}`, which pinguard.lock does not hold"),
        # What a pod of team-a pinned to the new digest is told when denied: to pin it to the old one.
        (line, column + len(f"{NAME_KEY}: "), f"ConfigMap tells to pin {RAY}:a to `{B}`, not to `{A}` as "
                                              "pinguard.lock does"),
    ], RULE)


def _fresh_configmap() -> str:
    """The params ConfigMap of an export of LOCK (its keepalive ConfigMap is another)."""
    return next(document for document in exported(LOCK).split("---\n") if PARAMS_COMPONENT in document)


@pytest.mark.parametrize(("old", "new", "found"), [
    (f"  {NAME_KEY}: {A[7:]}\n", "", f"ConfigMap does not name 1 entry that pinguard.lock holds: {RAY}:a; export it"),
    (f"{NAME_KEY}: {A[7:]}", f"{NAME_KEY}: garbage", f"ConfigMap tells to pin {RAY}:a to `garbage`, not to `{A}`"),
    (f"{NAME_KEY}: {A[7:]}", f"{NAME_KEY}: {{}}", f"ConfigMap tells to pin {RAY}:a to no digest, not to `{A}`"),
    (f"  {NAME_KEY}:", f"  docker.io_slibrary_snginx_c1.25: {A[7:]}\n  {NAME_KEY}:",
     "ConfigMap names `docker.io_slibrary_snginx_c1.25`, which pinguard.lock has no entry for"),
])
def test_name_keys_tell_the_digest_the_lock_holds(tmp_path: Path, old: str, new: str, found: str) -> None:
    text = _fresh_configmap().replace(old, new)
    assert text != _fresh_configmap()
    (finding,) = check_rule(tmp_path, RULE, {"cm.yaml": text}, lock=LOCK)
    assert found in finding.message


@pytest.mark.parametrize(("old", "new", "said"), [
    ("digests.from: '00'", "digests.from: zz", "(`digests.from` 'zz', `digests.to` 'ff', `names.class` '0', "
                                               "`names.classes` '1') that is no cell of the 1x1 layout"),
    ("digests.from: '00'", "digests.from: 'aa'", "`digests.from` 'aa'"),  # a cell would pass 00 to a9 unjudged
    # Written twice, read as the API server reads it: the last `digests.to` (ff), so the range ff to ff
    ("digests.from: '00'", "digests.from: ff\n  digests.to: '00'", "`digests.from` 'ff', `digests.to` 'ff'"),
    ("digests.from: '00'", "digests.from: 'AA'", "`digests.from` 'AA'"),
    ("digests.to: ff", "digests.to: fff", "`digests.to` 'fff'"),
    ("  digests.to: ff\n", "", "no one `digests.to`"),
    ("digests.to: ff", "digests.to: [ff]", "no one `digests.to`"),
    ("names.classes: '1'", "names.classes: '2'", "`names.class` '0', `names.classes` '2'"),  # class 1 unjudged
    ("names.classes: '1'", "names.classes: '0'", "`names.classes` '0'"),
    ("names.classes: '1'", "names.classes: '" + "9" * 5000 + "'", "`names.classes` '999"),
    ("names.class: '0'", "names.class: '-0'", "`names.class` '-0'"),
    ("  names.class: '0'\n", "", "no one `names.class`"),
])
def test_settings_that_are_no_cell_of_the_lock_s_layout_are_a_finding(tmp_path: Path, old: str, new: str,
                                                                     said: str) -> None:
    text = _fresh_configmap().replace(old, new)
    assert text != _fresh_configmap()
    found = check_rule(tmp_path, RULE, {"cm.yaml": text}, lock=LOCK)
    assert_found(found, [(*at(text, "\ndata:"), said)], RULE)
    assert "a container may pass unjudged; export it again" in found[0].message


def test_a_layout_label_of_another_lock_size_is_a_finding(tmp_path: Path) -> None:
    text = _fresh_configmap().replace("pinguard.dev/layout: 1x1", "pinguard.dev/layout: 2x1")
    found = check_rule(tmp_path, RULE, {"cm.yaml": text}, lock=LOCK)
    assert_found(found, [(*at(text, "2x1"), "ConfigMap params were split for another lock size (pinguard.dev/layout "
                                            "'2x1'; pinguard.lock is exported as 1x1): export it again")], RULE)
    assert found[0].message.endswith("run the `kubectl delete` command of its header")


def test_params_of_a_lock_that_cannot_be_exported_are_a_finding(tmp_path: Path) -> None:
    unexportable = LOCK.with_entries([LockEntry(RAY, "no tag!", B, INDEX, 0, "other", None, "t", {})])
    text = _fresh_configmap()
    found = check_rule(tmp_path, RULE, {"cm.yaml": text}, lock=unexportable)
    assert_found(found, [(*at(text, "1x1"), "ConfigMap was exported from another lock: pinguard.lock: "),
                         (*at(text, "\ndata:"), f"ConfigMap does not admit 1 digest that pinguard.lock holds: `{B}`")],
                 RULE)


# --- a lock split over ConfigMaps ---

def entry(index: int, version: str = "v1") -> LockEntry:
    name = f"registry.example/team/app{index}"
    return LockEntry(name, "v1", locked_test_digest(name, version), INDEX, 0, "other", None, "t", {})


def many(count: int) -> Lock:
    return Lock().with_entries(entry(index) for index in range(count))


def configmaps(of: Lock) -> dict[str, dict[str, str]]:
    """The params ConfigMaps of an export of `of`, by name."""
    return {obj["metadata"]["name"]: obj["data"] for obj in vap.objects(Source(of, "pinguard.lock", "0" * 64), (),
                                                                        "deny")
            if obj["kind"] == "ConfigMap" and obj["metadata"]["labels"][COMPONENT] == PARAMS_COMPONENT}


def named_at(text: str) -> dict[int, str]:
    """The name of the object each line of an export belongs to: its document's first `  name:`."""
    names: dict[int, str] = {}
    document: list[int] = []
    name = ""
    for number, line in enumerate([*text.splitlines(), "---"], 1):
        if line == "---":
            names.update(dict.fromkeys(document, name))
            document, name = [], ""
        else:
            document.append(number)
            name = name or line.removeprefix("  name: ") * line.startswith("  name: ")
    return names


def kinds_of(found: list[Finding], text: str) -> list[tuple[str, str]]:
    """(ConfigMap, what the finding says up to its digest or name) of each finding, sorted."""
    said = ("does not admit", "admits", "tells to pin", "no entry for", "does not name", "split for another")
    names = named_at(text)
    return sorted((names[f.line], next(s for s in said if s in f.message)) for f in found)


def expected_kinds(old: dict[str, dict[str, Any]], fresh: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """What differs between an old export's ConfigMaps and a fresh one's of the same layout, as `kinds_of` says it."""
    expected = []
    for name, data in old.items():
        was, now = set(data), set(fresh[name])
        expected += [(name, "does not admit")] * any(len(k) == 64 for k in now - was)
        expected += [(name, "admits") for k in was - now if len(k) == 64]
        expected += [(name, "no entry for") for k in was - now if len(k) != 64]
        expected += [(name, "tells to pin") for k in was & now if len(k) != 64 and data[k] != fresh[name][k]]
        expected += [(name, "does not name")] * any(len(k) != 64 for k in now - was)
    return sorted(expected)


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> Lock:
    """60 entries over 4 digest ranges by 3 name classes: ConfigMaps held to 16 KiB."""
    monkeypatch.setattr(params, "STORED_BUDGET", 16 * 1024)
    return many(60)


def test_a_fresh_export_of_a_lock_split_over_ranges_and_classes_passes(tmp_path: Path, split_small: Lock) -> None:
    assert len(configmaps(split_small)) == 12 and "-of-4x3" in next(iter(configmaps(split_small)))
    assert check_rule(tmp_path, RULE, {"admission.yaml": exported(split_small)}, lock=split_small) == []


def test_each_cell_of_a_split_export_of_an_older_lock_says_what_it_holds_wrong(tmp_path: Path,
                                                                               split_small: Lock) -> None:
    # Entry 0 moved its tag, entry 1 was dropped, entry 60 added: the same layout.
    older = split_small.with_entries([entry(0, "v0")])
    new = split_small.only(set(split_small.entries) - {entry(1).key}).with_entries([entry(60)])
    text = exported(older)
    found = check_rule(tmp_path, RULE, {"admission.yaml": text}, lock=new)
    assert configmaps(older).keys() == configmaps(new).keys()
    assert kinds_of(found, text) == expected_kinds(configmaps(older), configmaps(new))
    assert {kind for _, kind in kinds_of(found, text)} == {
        "does not admit", "admits", "tells to pin", "no entry for", "does not name"}


def test_a_split_export_of_another_layout_is_told_in_each_cell(tmp_path: Path, split_small: Lock,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    text, names = exported(split_small), list(configmaps(split_small))
    monkeypatch.setattr(params, "STORED_BUDGET", 20 * 1024)  # the same lock is split otherwise now
    (now,) = {cell.layout for cell in params.cells(Source(split_small, "pinguard.lock", "0" * 64))}
    found = check_rule(tmp_path, RULE, {"admission.yaml": text}, lock=split_small)
    bindings = [f for f in found if f.message.startswith("ValidatingAdmissionPolicyBinding")]
    found = [f for f in found if f not in bindings]
    assert len(names) == 12 and str(now) != "4x3"
    # Each cell holds what its range and class hold: only its layout is told.
    assert kinds_of(found, text) == sorted((name, "split for another") for name in names)
    assert all(f"(pinguard.dev/layout '4x3'; pinguard.lock is exported as {now})" in f.message for f in found)
    # And each binding, once the export of the lock is applied and pruned, would be left without its params.
    assert len(bindings) == 12 * (text.count("kind: ValidatingAdmissionPolicy\n") - 1)  # the keepalive's is fine
    assert all(f"which an export of pinguard.lock does not write (its params are split {now})" in f.message
               for f in bindings)


LARGE = many(2_500)  # 2x1 at the real limits: names in every cell, digests cut in two ranges


@pytest.fixture(scope="module")
def large_export() -> str:
    return exported(LARGE)


def test_a_fresh_export_of_a_large_lock_passes(tmp_path: Path, large_export: str) -> None:
    assert list(configmaps(LARGE)) == ["pinguard-lock-0-0-of-2x1", "pinguard-lock-1-0-of-2x1"]
    assert check_rule(tmp_path, RULE, {"admission.yaml": large_export}, lock=LARGE) == []


def test_an_export_of_an_older_large_lock_is_found(tmp_path: Path) -> None:
    older = LARGE.with_entries([entry(0, "v0")])
    text = exported(older)
    found = check_rule(tmp_path, RULE, {"admission.yaml": text}, lock=LARGE)
    assert kinds_of(found, text) == expected_kinds(configmaps(older), configmaps(LARGE))
    assert len(found) == 4  # the new digest and the old in their ranges; the name in both cells


def test_an_export_of_a_smaller_lock_is_told_to_be_split_again(tmp_path: Path, large_export: str) -> None:
    smaller = many(100)
    text = exported(smaller)
    found = [f for f in check_rule(tmp_path, RULE, {"admission.yaml": text}, lock=LARGE)
             if not f.message.startswith("ValidatingAdmissionPolicyBinding")]  # the bindings: told above
    assert len(found) == 3
    assert found[0].message.startswith("ConfigMap params were split for another lock size (pinguard.dev/layout "
                                       "'1x1'; pinguard.lock is exported as 2x1)")
    assert found[1].message.startswith("ConfigMap does not admit 2400 digests that pinguard.lock holds: `sha256:")
    assert found[2].message.startswith("ConfigMap does not name 2400 entries that pinguard.lock holds: "
                                       "registry.example/team/app1000:v1, ")
    # Ten of them named, the rest counted: the message says what to do however large the lock.
    assert all(f.message.count("registry.example") == 10 and f.message.endswith(
        " and 2390 more; export it again with `pinguard export admission`") for f in found[1:])
    # And the other way: the large export checked against the smaller lock.
    found = check_rule(tmp_path, RULE, {"admission.yaml": large_export}, lock=smaller)
    layouts = [f for f in found if "split for another lock size" in f.message]
    assert [named_at(large_export)[f.line] for f in layouts] == ["pinguard-lock-0-0-of-2x1", "pinguard-lock-1-0-of-2x1"]
    assert all("pinguard.dev/layout '2x1'; pinguard.lock is exported as 1x1" in f.message for f in layouts)


# --- a lock too large to name its entries in every cell ---

@pytest.fixture
def digests_only(monkeypatch: pytest.MonkeyPatch) -> Lock:
    """60 entries whose names fit no grid of 4 cells of 16 KiB: two ranges of digests only."""
    monkeypatch.setattr(params, "STORED_BUDGET", 16 * 1024)
    monkeypatch.setattr(params, "MAX_CELLS", 4)
    return many(60)


def test_a_fresh_export_of_digests_only_passes(tmp_path: Path, digests_only: Lock) -> None:
    text = exported(digests_only)
    assert list(configmaps(digests_only)) == ["pinguard-lock-0-0-of-2x1", "pinguard-lock-1-0-of-2x1"]
    assert text.count("  names.omitted: 'true'\n") == 2
    assert check_rule(tmp_path, RULE, {"admission.yaml": text}, lock=digests_only) == []


def test_an_export_of_digests_only_of_an_older_lock_is_found(tmp_path: Path, digests_only: Lock) -> None:
    older = digests_only.with_entries([entry(0, "v0")])
    text = exported(older)
    found = check_rule(tmp_path, RULE, {"admission.yaml": text}, lock=digests_only)
    assert kinds_of(found, text) == expected_kinds(configmaps(older), configmaps(digests_only))
    assert {kind for _, kind in kinds_of(found, text)} == {"does not admit", "admits"}  # no name in either


def test_a_cell_that_says_it_names_entries_or_not_otherwise_than_the_export_is_found(tmp_path: Path,
                                                                                     digests_only: Lock) -> None:
    unmarked = exported(digests_only).replace("  names.omitted: 'true'\n", "", 1)
    found = check_rule(tmp_path, RULE, {"admission.yaml": unmarked}, lock=digests_only)
    assert_found(found, [(*at(unmarked, "\ndata:", after=PARAMS_COMPONENT),
                          "ConfigMap lacks `names.omitted: 'true'`, but pinguard.lock is exported as 2x1 of digests "
                          "only (too large to name its entries in every cell): a denial would say the lock has no "
                          "entry for an image it may hold; export it again")], RULE)
    marked = _fresh_configmap().replace("  names.class: '0'\n", "  names.class: '0'\n  names.omitted: 'true'\n")
    found = check_rule(tmp_path, RULE, {"cm.yaml": marked}, lock=LOCK)
    assert_found(found, [(*at(marked, "\ndata:"), "ConfigMap says it names no entry (`names.omitted`), but "
                          "pinguard.lock is exported as 1x1, naming each entry in the cell of its class: a denial "
                          "would not say what to pin")], RULE)


# --- the keepalive ---

@pytest.mark.parametrize(("old", "new"), [
    ("    parameterNotFoundAction: Allow\n", "    parameterNotFoundAction: Deny\n"),
    ("  - expression: 'true'\n", "  - expression: 'false'\n"),
    ("  purpose: 'keeps", "  more: x\n  purpose: 'keeps"),
])
def test_a_keepalive_is_not_read_as_params_and_is_found_where_it_is_not_what_pinguard_writes(
        tmp_path: Path, old: str, new: str) -> None:
    fresh = exported(LOCK)
    assert fresh.count("admission-keepalive") == 3 and fresh.count(old) == 1
    text = fresh.replace(old, new)
    found = check_rule(tmp_path, RULE, {"admission.yaml": text}, lock=LOCK)
    start = text.rindex("---\n", 0, text.index(new)) + len("---\n")  # the changed object's document
    kind = text[start:].split("\nkind: ", 1)[1].split("\n", 1)[0]
    assert_found(found, [(text[:start].count("\n") + 1, 1,
                          f"{kind} pinguard-keepalive is not the keepalive pinguard writes")], RULE)


# --- cost ---

def test_the_lock_is_read_once_a_run_whatever_the_objects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"layout_of": 0, "entry_name": 0}

    def counted(name: str, function: Any) -> Any:
        def call(*args: Any) -> Any:
            calls[name] += 1
            return function(*args)
        return call

    for name in calls:
        monkeypatch.setattr(stale_admission, name, counted(name, getattr(stale_admission, name)))
    text = "---\n".join([_fresh_configmap()] * 50)
    assert check_rule(tmp_path, RULE, {"admission.yaml": text}, lock=LOCK) == []
    assert calls == {"layout_of": 1, "entry_name": len(LOCK)}


class _CountedReads(Sequence[str]):
    """A sorted list of the lock's digests or names that counts how many of its items are read."""

    def __init__(self, items: list[str], reads: list[int]) -> None:
        self.items, self.reads = items, reads

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, at: Any) -> Any:
        self.reads[0] += 1
        return self.items[at]


def _reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, of: Lock) -> int:
    """How many items of the lock's sorted digests and names the rule reads to check `text`."""
    reads = [0]
    absent = stale_admission._absent

    def counted(wanted: list[str], span: tuple[int, int], present: set[str]) -> tuple[int, list[str]]:
        return absent(_CountedReads(wanted, reads), span, present)  # type: ignore[arg-type]

    with monkeypatch.context() as patched:
        patched.setattr(stale_admission, "_absent", counted)
        found = check_rule(tmp_path, RULE, {"admission.yaml": text}, lock=of)
    assert len(found) == 3 * 400  # two digests admitted that the lock does not hold, and all it holds missing
    return reads[0]


def test_an_object_costs_what_it_holds_not_what_the_lock_holds(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # 400 ConfigMaps each missing the whole lock: a lock 8 times larger must not cost 8 times as much. Counted in
    # items read, not in seconds: a search per digest held and the few named grow with the lock's logarithm only.
    text = "---\n".join(CONFIGMAP % (f"{index:064x}", B[7:]) for index in range(400))
    small, large = _reads(tmp_path, monkeypatch, text, many(1_000)), _reads(tmp_path, monkeypatch, text, many(8_000))
    assert 0 < small and large < 2 * small, (small, large)
