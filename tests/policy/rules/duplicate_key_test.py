"""duplicate-key as a truth table: a YAML file in, findings (line, column, message part) out."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.helpers import assert_found, check_rule

POD = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    image: nginx:1.25\n"
GO = "Go's YAML (Helm, kubectl, kustomize) keeps the last, kubectl's strict field validation rejects it"


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("pod.yaml", POD, []),
    ("pod.yaml", POD.replace("kind: Pod", "kind: CustomResourceDefinition\nkind: Pod"),
     [(2, 1, f"key `kind` written twice in one mapping (lines 2 and 3): {GO}")]),
    ("pod.yaml", POD + "    image: redis:7\n", [(6, 5, "key `image` written twice in one mapping (lines 6 and 7)")]),
    ("pod.yaml", POD + '    "\\x69mage": redis:7\n', [(6, 5, "key `image` written twice")]),  # the same key, escaped
    ("pod.yaml", POD + "    !!binary aW1hZ2U=: redis:7\n", [(6, 5, "key `image` written twice")]),
    ("pod.yaml", POD + "  containers: []\n", [(4, 3, "key `containers` written twice in one mapping (lines 4 and 7)")]),
    ("pod.yaml", POD + "  containers: []\n  containers: []\n",
     [(4, 3, "lines 4 and 8"), (7, 3, "lines 7 and 8")]),
    # Keys merged in with `<<` are overridden by the mapping's own: not written twice.
    ("pod.yaml", "x: &base {name: a, image: nginx:1.25}\nkind: Pod\nspec:\n  containers:\n"
                 "  - <<: *base\n    image: redis:7\n", []),
    # A mapping reached through aliases is reported once, where it is written.
    ("pod.yaml", "x: &c {image: a:1, image: b:2}\nkind: Pod\nspec: {containers: [*c, *c]}\n",
     [(1, 8, "key `image` written twice")]),
    ("compose.yaml", "services:\n  web:\n    image: nginx:1.25\n    image: redis:7\n",
     [(3, 5, "key `image` written twice")]),
    ("values.yaml", "image:\n  repository: nginx\n  tag: '1.25'\n  tag: '1.26'\n", [(3, 3, "key `tag` written twice")]),
    (".github/workflows/ci.yml", "on: push\njobs:\n  a:\n    container: node:18\n    container: node:20\n"
                                 "    runs-on: x\n    steps: [{run: x}]\n", [(4, 5, "key `container` written twice")]),
])
def test_duplicate_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str,
                       expected: list[tuple[int, int, str]]) -> None:
    monkeypatch.chdir(tmp_path)
    Path(name).parent.mkdir(parents=True, exist_ok=True)
    assert_found(check_rule(tmp_path, "duplicate-key", {name: text}), expected, "duplicate-key")


def test_a_document_is_read_as_go_reads_it_and_never_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The earlier `kind: CustomResourceDefinition` does not hide the Pod's image from the other rules."""
    monkeypatch.chdir(tmp_path)
    found = check_rule(tmp_path, "unpinned", {"pod.yaml": POD.replace("kind: Pod", "kind: CustomResourceDefinition\n"
                                                                                   "kind: Pod")})
    assert [(f.line, f.column, f.reference) for f in found] == [(7, 12, "nginx:1.25")]
