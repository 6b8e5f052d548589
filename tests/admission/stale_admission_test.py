"""stale-admission as a truth table: exported admission objects in, findings (line, column, message part) out."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.admission import Source
from pinguard.admission.export import render
from pinguard.lockfile import Lock, LockEntry
from testing.lockdata import locked_test_digest
from tests.policy.helpers import assert_found, check_rule

RULE = "stale-admission"
RAY = "public.ecr.aws/deep-learning-containers/ray"
A, B = locked_test_digest(RAY, "a"), locked_test_digest(RAY, "b")
ARM = locked_test_digest(RAY, "a arm64")


def lock(*entries: tuple[str, str, dict[str, str]]) -> Lock:
    return Lock().with_entries(LockEntry(RAY, tag, digest, "m", 0, "other", None, "t", platforms)
                               for tag, digest, platforms in entries)


LOCK = lock(("a", A, {"linux/arm64": ARM}))


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def exported(of: Lock, fmt: str = "vap") -> str:
    return render(Source(of, "pinguard.lock", "0" * 64), fmt, (), "deny")


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


def test_what_the_lock_exports_passes(tmp_path: Path) -> None:
    for fmt in ("vap", "kyverno"):
        assert check_rule(tmp_path, RULE, {"admission.yaml": exported(LOCK, fmt)}, lock=LOCK) == []


def test_a_configmap_pinguard_did_not_make_is_not_checked(tmp_path: Path) -> None:
    text = CONFIGMAP.replace("labels: {app.kubernetes.io/managed-by: pinguard}", "labels: {app: mine}")
    assert check_rule(tmp_path, RULE, {"cm.yaml": text % (B[7:], ARM[7:])}, lock=LOCK) == []


@pytest.mark.parametrize(("keys", "expected"), [
    ((A[7:], ARM[7:]), []),
    ((B[7:], ARM[7:]), [(6, 1, f"ConfigMap does not admit 1 digest that pinguard.lock holds: `{A}` ({RAY}:a)"),
                        (7, 3, f"ConfigMap admits `{B}`, which pinguard.lock does not hold")]),
    ((A[7:], "not-a-digest"), [(6, 1, f"does not admit 1 digest that pinguard.lock holds: `{ARM}` ({RAY}:a)")]),
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
    edited = exported(LOCK, "kyverno").replace(f"- {ARM}", f"- {B}", 2)  # two rules of six hand-edited alike
    found = check_rule(tmp_path, RULE, {"kyverno.yaml": edited}, lock=LOCK)
    assert_found(found, [(42, 15, f"ClusterPolicy does not admit 1 digest that pinguard.lock holds: `{ARM}`"),
                         (43, 17, f"ClusterPolicy admits `{B}`")], RULE)


def test_another_file_kind_is_not_read(tmp_path: Path) -> None:
    assert check_rule(tmp_path, RULE, {"values.yaml": CONFIGMAP % (B[7:], B[7:])}, lock=LOCK) == []
