"""Overrides written into a values file of this repository, for a chart whose own values are not (overrides.py)."""
from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from pinguard.helm.overrides import override_edit
from pinguard.write.edits import apply

DIGEST = "sha256:" + "a" * 64


def _set(text: str, path: tuple[str, ...], value: str = DIGEST) -> str | None:
    edit = override_edit(text, path, value)
    return None if edit is None else apply(text, [edit])


@pytest.mark.parametrize(("text", "path", "expected"), [
    pytest.param("replicas: 3\nimage:\n  pullPolicy: Always\n", ("image", "digest"),
                 f'replicas: 3\nimage:\n  digest: "{DIGEST}"\n  pullPolicy: Always\n', id="into-a-block"),
    pytest.param("image:\n    # kept with its key\n    pullPolicy: Always\n", ("image", "digest"),
                 f'image:\n    digest: "{DIGEST}"\n    # kept with its key\n    pullPolicy: Always\n',
                 id="the-block's-indentation"),
    pytest.param("a:\n    b:\n        c: 1\n", ("a", "b", "d", "e"),
                 f'a:\n    b:\n        d:\n            e: "{DIGEST}"\n        c: 1\n',
                 id="deeper-keys-step-as-the-file"),
    pytest.param("# prod\nreplicas: 3\n", ("metrics", "image", "tag"),
                 f'# prod\nreplicas: 3\nmetrics:\n  image:\n    tag: "{DIGEST}"\n', id="appended-at-the-end"),
    pytest.param("replicas: 3", ("image", "tag"), f'replicas: 3\nimage:\n  tag: "{DIGEST}"\n',
                 id="no-final-line-break"),
    pytest.param("a:\n  b: |\n    text\n\nc: 1\n", ("d",), f'a:\n  b: |\n    text\n\nc: 1\nd: "{DIGEST}"\n',
                 id="after-a-block-scalar"),
    pytest.param("", ("image", "tag"), f'image:\n  tag: "{DIGEST}"\n', id="empty"),
    pytest.param("# nothing yet", ("tag",), f'# nothing yet\ntag: "{DIGEST}"\n', id="comments-alone"),
    pytest.param("image:\n  tag:\n  pullPolicy: Always\n", ("image", "tag"),
                 f'image:\n  tag: "{DIGEST}"\n  pullPolicy: Always\n', id="an-empty-value-filled"),
    pytest.param("image:\n  tag: ''  # set by CI\n", ("image", "tag"), f'image:\n  tag: "{DIGEST}"  # set by CI\n',
                 id="a-quoted-value-replaced"),
    pytest.param("image:\n  tag: ~\n", ("image", "tag"), f'image:\n  tag: "{DIGEST}"\n', id="a-null-replaced"),
    pytest.param("x: 1\r\nimage:\r\n  a: 1\r\n", ("image", "digest"),
                 f'x: 1\r\nimage:\r\n  digest: "{DIGEST}"\r\n  a: 1\r\n', id="crlf"),
    pytest.param("x: 1\n", ("on", "a.b", "1"), f'x: 1\n"on":\n  "a.b":\n    "1": "{DIGEST}"\n',
                 id="keys-quoted-where-yaml-reads-them-otherwise"),
])
def test_an_override_is_merged_into_the_blocks_the_file_has(text: str, path: tuple[str, ...], expected: str) -> None:
    assert _set(text, path) == expected


@pytest.mark.parametrize(("text", "path"), [
    pytest.param("image: {pullPolicy: Always}\n", ("image", "digest"), id="a-flow-mapping"),
    pytest.param("{image: {}}\n", ("image", "digest"), id="a-flow-file"),
    pytest.param("x: 1\n", ("images", "[0]", "tag"), id="a-list-on-the-path"),
    pytest.param("base: &b\n  a: 1\nimage: *b\n", ("image", "digest"), id="an-alias"),
    pytest.param("base: &b\n  a: 1\nimage:\n  <<: *b\n  c: 2\n", ("image", "digest"), id="a-merge"),
    pytest.param("image: nginx\n", ("image", "digest"), id="a-scalar-where-a-block-goes"),
    pytest.param("image:\n", ("image", "digest"), id="a-null-where-a-block-goes"),
    pytest.param("image:\n  tag: [1]\n", ("image", "tag"), id="a-list-at-the-key"),
    pytest.param("image:\n  tag: |\n    x\n", ("image", "tag"), id="a-block-scalar-at-the-key"),
    pytest.param("a: 1\n---\nb: 2\n", ("c",), id="two-documents"),
    pytest.param("- a\n", ("c",), id="a-list-file"),
    pytest.param("a: [\n", ("c",), id="not-yaml"),
])
def test_no_edit_where_inserting_lines_cannot_set_the_path(text: str, path: tuple[str, ...]) -> None:
    assert override_edit(text, path, DIGEST) is None


def test_an_anchored_block_is_merged_into_on_the_lines_below_its_key() -> None:
    assert _set("image: &x\n  a: 1\n", ("image", "digest")) == f'image: &x\n  digest: "{DIGEST}"\n  a: 1\n'


_KEYS = st.sampled_from(["image", "tag", "repository", "a", "on", "x.y"])
_TREES = st.recursive(st.integers(0, 9), lambda inner: st.dictionaries(_KEYS, inner, min_size=1, max_size=3),
                      max_leaves=8)


def _merged(tree: Any, path: tuple[str, ...], value: str) -> Any:
    if not path:
        return value
    base = tree if isinstance(tree, dict) else {}
    return {**base, path[0]: _merged(base.get(path[0]), path[1:], value)}


@given(tree=st.dictionaries(_KEYS, _TREES, max_size=4), path=st.lists(_KEYS, min_size=1, max_size=4).map(tuple),
       indent=st.sampled_from([2, 4]))
def test_an_override_reads_back_as_the_values_merged(tree: dict[str, Any], path: tuple[str, ...], indent: int) -> None:
    """Wherever the path meets the file, what YAML reads afterwards is the file's values with the path set, every
    other value as it was; where a number stands on the path, no edit."""
    text = yaml.safe_dump(tree, indent=indent, default_flow_style=False) if tree else ""
    written = _set(text, path)
    node: Any = tree
    blocked = False
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
        if node is not None and not isinstance(node, dict):
            blocked = True
            break
    if blocked or (isinstance(node, dict) and isinstance(node.get(path[-1]), dict)):
        assert written is None
        return
    assert written is not None
    assert yaml.safe_load(written) == _merged(tree, path, DIGEST)
