"""Hostile documents through `pinguard check`: read as their consumers read them, refused in one line when they
cannot be, and never echoed whole into what check prints.

A ConfigMap exported for admission that admits a digest through a YAML merge key admits it for
kubectl too; a `List` is applied item by item; nesting beyond what libyaml reads is an error
with its place, not a file passed over; a megabyte image value or one holding terminal escapes
is cut and escaped in every format.
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from testing.lockdata import INDEX, locked_test_digest

RAY = "public.ecr.aws/deep-learning-containers/ray"
HELD = locked_test_digest(RAY, "a")
SMUGGLED = locked_test_digest(RAY, "old")
LOCK = Lock().with_entries([LockEntry(RAY, "a", HELD, INDEX, 0, "other", None, "t", {})])

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: pinguard-lock
  labels: {{app.kubernetes.io/managed-by: pinguard}}
{anchors}data:
  {held}: the index
{more}"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    lockfile.write(tmp_path / "pinguard.lock", LOCK)


def _check(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["check", *args], env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _configmap(more: str, anchors: str = "") -> str:
    return CONFIGMAP.format(held=HELD[7:], more=more, anchors=anchors)


@pytest.mark.parametrize(("anchors", "more", "line"), [
    ("", f"  <<: {{{SMUGGLED[7:]}: x}}\n", 8),  # a merge key with a flow mapping
    (f"binaryData: &old\n  {SMUGGLED[7:]}: eA==\n", "  <<: *old\n", 7),  # with an alias
    (f"x-spare: [&none {{}}, &old {{{SMUGGLED[7:]}: x}}]\n", "  <<: [*none, *old]\n", 6),  # a list of merges
    (f"x-spare:\n  - &inner {{{SMUGGLED[7:]}: x}}\n  - &outer {{<<: *inner}}\n", "  <<: *outer\n", 7),  # merged twice
])
def test_a_digest_admitted_through_a_merge_key_is_a_finding(anchors: str, more: str, line: int) -> None:
    text = _configmap(more, anchors)
    data = yaml.safe_load(text)["data"]
    assert f"{SMUGGLED[7:]}" in data and HELD[7:] in data  # what every YAML loader, kubectl's included, admits
    Path("admission.yaml").write_text(text)
    status, out, _ = _check("admission.yaml")
    assert status == 1
    assert f"admission.yaml:{line}:" in out
    assert f"ConfigMap admits `{SMUGGLED}`, which pinguard.lock does not hold" in out


def test_a_digest_admitted_in_data_written_twice_is_a_finding() -> None:
    text = _configmap(f"data:\n  {SMUGGLED[7:]}: x\n")
    assert list(yaml.safe_load(text)["data"]) == [SMUGGLED[7:]]  # the last one wins for PyYAML
    Path("admission.yaml").write_text(text)
    status, out, _ = _check("admission.yaml")
    assert status == 1
    assert f"admission.yaml:9:3: error: ConfigMap admits `{SMUGGLED}`" in out


@pytest.mark.parametrize("label", [r'"pin\x67uard"', "!!binary cGluZ3VhcmQ="])
def test_a_managed_by_label_written_with_escapes_is_checked(label: str) -> None:
    text = _configmap(f"  {SMUGGLED[7:]}: x\n").replace("managed-by: pinguard}", f"managed-by: {label}}}")
    text = text.replace("name: pinguard-lock", "name: params")
    assert "pinguard" not in text  # the label's value is nowhere as written
    Path("admission.yaml").write_text(text)
    status, out, _ = _check("admission.yaml")
    assert status == 1 and f"ConfigMap admits `{SMUGGLED}`" in out


def test_a_merged_key_never_overrides_one_written() -> None:
    Path("admission.yaml").write_text(_configmap(f"  <<: {{{HELD[7:]}: merged}}\n"))
    assert _check("admission.yaml")[:2] == (0, "")


def test_a_list_is_checked_item_by_item() -> None:
    item = _configmap(f"  {SMUGGLED[7:]}: x\n")
    listed = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(item)]}
    Path("admission.yaml").write_text(yaml.safe_dump(listed))
    status, out, _ = _check("admission.yaml")
    assert status == 1
    assert f"ConfigMap admits `{SMUGGLED}`" in out


@pytest.mark.parametrize("nested", [
    "extra: " + "[" * 100_000 + "]" * 100_000,
    "extra: " + "{a: " * 100_000 + "b" + "}" * 100_000,
    "extra:\n" + "".join(f"{'  ' * depth}- x:\n" for depth in range(2_000)),
], ids=["flow-sequence", "flow-mapping", "block"])
def test_yaml_nested_too_deep_is_one_line_with_its_place(nested: str) -> None:
    # The `{{` once had such a file read line by line as a template, and the image passed over.
    pod = "kind: Pod  # {{ x }}\nspec:\n  containers:\n  - image: evil.example/x:latest\n"
    Path("pod.yaml").write_text(pod + nested)
    status, out, err = _check("pod.yaml")
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "pod.yaml:" in err and "YAML nested too deeply to read" in err


IMAGE = "evil.example/" + "a" * (1 << 20) + ":latest"


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_hostile_value_is_cut_and_escaped_in_every_format(fmt: str) -> None:
    Path("pod.yaml").write_text(f"kind: Pod\nspec:\n  containers:\n  - image: '{IMAGE}'\n"
                                "  - image: evil.example/x:lat\u202eest\n")  # a right-to-left override, as written
    Path("Dockerfile").write_text("FROM evil.example/x:{{ t }}\x1b]0;owned\x07\x1b[2J\n")
    status, out, err = _check("--format", fmt, "pod.yaml", "Dockerfile")
    assert (status, err) == (0, "")  # warnings: none of these values names an image a runtime could pull
    assert len(out) < 64 << 10  # a megabyte value is not echoed whole
    assert "a" * 400 in out and "a" * 513 not in out and "…" in out
    assert not {"\x1b", "\x07", "\u202e"} & set(out)  # what would rewrite a terminal or reorder text is escaped
    assert ("\\u202e" if fmt == "json" else "202e") in out


def test_a_hostile_value_in_an_error_is_cut_and_escaped() -> None:
    Path("Dockerfile").write_text("# escape=" + "x" * (1 << 20) + "\x1b[2J\nFROM nginx:1.25\n")
    status, out, err = _check("Dockerfile")
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and len(err) < 4 << 10 and "\x1b" not in err
    assert "Dockerfile:1:10: invalid escape token 'xxx" in err
