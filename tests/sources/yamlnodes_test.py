"""What the YAML kinds share: merge keys followed once per mapping, line and column of every offset."""
from __future__ import annotations

import io
import random
from contextlib import chdir
from pathlib import Path

import pytest
import yaml

from pinguard.cli import main
from pinguard.helm import values
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from pinguard.sources import kinds, yamlnodes
from pinguard.sources.base import SourceError, Unreadable
from pinguard.sources.yamlnodes import (
    Located,
    compose,
    expanded_size,
    line_break,
    mapping_get,
    mapping_pairs,
    scalar_text,
)
from testing import lockdata


def _bomb(levels: int, copies: int) -> list[str]:
    """Anchors `b0`..`b<levels>`, each merging the one before `copies` times: copies**levels paths reach `b0`."""
    lines = ["bases:", "  b0: &b0 {port: 80}"]
    for level in range(1, levels + 1):
        aliases = ", ".join([f"*b{level - 1}"] * copies)
        lines.append(f"  b{level}: &b{level} {{<<: [{aliases}], l{level}: {level}}}")
    return lines


# 6**16 paths: searched once per path, as merge keys once were, a lookup would never end.
BOMB = _bomb(16, 6)


def test_a_merge_key_bomb_is_searched_once_per_mapping() -> None:
    (document,) = compose("\n".join([*BOMB, "top:", "  <<: [*b16, {image: nginx:1.25}]", ""]))
    top = mapping_get(document, "top")
    assert top is not None
    assert mapping_get(top, "missing") is None
    assert scalar_text(mapping_get(top, "image")) == "nginx:1.25"  # after every path through the bomb
    assert scalar_text(mapping_get(top, "port")) == "80"
    assert scalar_text(mapping_get(top, "l16")) == "16"


# Which value a key has where merges nest, as the merge key's spec says.
MERGES = [
    # document                                                               key  value
    ("a: &a {k: 1}\nm: {<<: *a, k: 2}\n",                                    "k", "2"),  # own keys win
    ("a: &a {k: 1}\nm: {k: 2, <<: *a}\n",                                    "k", "2"),  # wherever they are written
    ("a: &a {k: 1}\nb: &b {k: 2}\nm: {<<: [*a, *b]}\n",                      "k", "1"),  # the first merged wins
    ("d: &d {k: 1}\nb: &b {<<: *d}\nc: &c {k: 2}\nm: {<<: [*b, *c]}\n",      "k", "1"),  # depth first: *b holds *d's
    ("d: &d {k: 1}\nb: &b {<<: *d, k: 3}\nc: &c {k: 2}\nm: {<<: [*b, *c]}\n", "k", "3"),  # PyYAML 6.0.4 says 1
    ("a: &a {j: 1}\nm: {<<: [*a, *a]}\n",                                    "k", None),
    ("m: {<<: [{k: 1}]}\n",                                                  "k", "1"),
    ("m: {<<: [x, {k: 1}]}\n",                                               "k", "1"),  # a merged scalar holds nothing
]


@pytest.mark.parametrize(("text", "key", "value"), MERGES)
def test_merged_values_are_the_ones_yaml_gives(text: str, key: str, value: str | None) -> None:
    (document,) = compose(text)
    merged = mapping_get(document, "m")
    assert merged is not None
    assert scalar_text(mapping_get(merged, key)) == value


@pytest.mark.parametrize(("text", "key", "value"), MERGES)
def test_the_pairs_of_a_mapping_are_the_ones_yaml_gives(text: str, key: str, value: str | None) -> None:
    (document,) = compose(text)
    pairs = mapping_pairs(mapping_get(document, "m"))
    assert "<<" not in [k.value for k, _ in pairs]  # a merge key is no key a loader sees
    assert {k.value: scalar_text(v) for k, v in pairs}.get(key) == value
    assert len({k.value for k, _ in pairs}) == len(pairs)


def test_the_pairs_of_a_merge_key_bomb_are_read_once_per_mapping() -> None:
    (document,) = compose("\n".join([*BOMB, "top:", "  <<: [*b16, {image: nginx:1.25}]", ""]))
    keys = [key.value for key, _ in mapping_pairs(mapping_get(document, "top"))]
    assert sorted(keys) == sorted(["port", "image", *(f"l{level}" for level in range(1, 17))])


@pytest.mark.parametrize(("text", "size"), [
    ("a: 1\n", 3),
    ("a: &x [1, 2]\nb: [*x, *x]\n", 13),  # the list counted where each alias stands
    ("\n".join([*BOMB, ""]), 10**6),  # 6**16 paths: counted up to the cap, in time linear in the text
    ("a: &a [*a]\n", 10**6),  # a list holding itself never ends
    ("a: &a {b: [*a]}\n", 10**6),
])
def test_the_expanded_size_of_a_document(text: str, size: int) -> None:
    (document,) = compose(text)
    assert expanded_size(document, 10**6) == size


@pytest.mark.parametrize(("text", "line", "column"), [
    ("a: " + "[" * 2_000 + "]" * 2_000, 1, 1003),
    ("a:\n" + "".join(f"{'  ' * depth}- b:\n" for depth in range(1_200)), 1_000, 2_000),
])
def test_yaml_nested_deeper_than_libyaml_reads_is_unreadable_where_it_goes_too_deep(text: str, line: int,
                                                                                      column: int) -> None:
    with pytest.raises(Unreadable) as raised:
        compose(text)
    assert (raised.value.line, raised.value.column) == (line, column)
    assert str(raised.value).startswith("YAML nested too deeply to read")


def test_yaml_nested_too_deep_for_pyyamls_own_composer_is_unreadable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlnodes, "_Loader", yaml.SafeLoader)  # where libyaml is missing: recursion in Python
    with pytest.raises(Unreadable):
        compose("a: " + "[" * 100_000 + "]" * 100_000)


def test_a_mapping_merged_into_itself_ends() -> None:
    (document,) = compose("a: &a\n  <<: *a\n  x: 1\nm:\n  <<: *a\n")
    merged = mapping_get(document, "m")
    assert merged is not None
    assert mapping_get(merged, "image") is None
    assert scalar_text(mapping_get(merged, "x")) == "1"


KINDS = [  # lines after the bomb, holding nginx:1.25 once, reached through it; where its value is written in them
    ("kubernetes", ["<<: *b16", "spec:", "  containers:", "  - image: nginx:1.25"], (4, 12, "nginx:1.25")),
    ("compose", ["x-a: &a {image: nginx:1.25}", "services:", "  web:", "    <<: [*b16, *a]"], (1, 17, "nginx:1.25")),
    ("helm", ["image:", "  <<: *b16", "  repository: nginx", "  tag: '1.25'"], (3, 15, "nginx")),
]


@pytest.mark.parametrize(("kind", "lines", "written"), KINDS)
def test_a_merge_key_bomb_is_scanned(kind: str, lines: list[str], written: tuple[int, int, str]) -> None:
    text = "\n".join([*BOMB, *lines, ""])
    found = (values.read("x.yaml", text) if kind == kinds.HELM else kinds.find("x.yaml", text, kind)).found
    line, column, value = written
    assert [(f.line, f.column, f.value) for f in found] == [(len(BOMB) + line, column, value)]
    assert [str(f.reference) for f in found] == ["docker.io/library/nginx:1.25"]


def test_scan_pin_and_check_end_on_a_merge_key_bomb(tmp_path: Path) -> None:
    text = "\n".join([*BOMB, "<<: *b16", "kind: Pod", "spec:", "  containers:", "  - image: nginx:1.25", ""])
    with chdir(tmp_path):
        Path("pod.yaml").write_text(text)
        lockfile.write(Path("pinguard.lock"), lockdata.lock_for(scan_paths(["."]).found))
        out, err = io.StringIO(), io.StringIO()
        assert main(["pin", "pod.yaml"], env={}, stdout=out, stderr=err) == 0, err.getvalue()
        digest = lockdata.locked_test_digest("docker.io/library/nginx", "1.25")
        assert Path("pod.yaml").read_text() == text.replace("nginx:1.25", f"nginx:1.25@{digest}")
        assert main(["check", "pod.yaml"], env={}, stdout=out, stderr=err) == 0, out.getvalue() + err.getvalue()


# Line and column: counted per offset while a file asks for few, from a table of line starts after.


def _naive(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of `index`, lines split at the file's line break character."""
    before = text[:index].split(line_break(text)[-1])
    return len(before), len(before[-1]) + 1


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_offset_gets_its_line_and_column_in_any_order(newline: str) -> None:
    rows = random.Random(7)
    text = newline.join("".join(rows.choice("ab é☕\t:") for _ in range(rows.randrange(12))) for _ in range(300))
    offsets = list(range(len(text) + 1))
    rows.shuffle(offsets)
    where = Located(text, "x.yaml", "kubernetes")
    spans = [where.span(i, i) for i in offsets]
    assert [(span.line, span.column) for span in spans] == [_naive(text, i) for i in offsets]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_thousands_of_references_in_one_file_are_each_where_written(newline: str) -> None:
    lines = ["apiVersion: v1", "kind: List", "items:"]
    expected: list[tuple[int, int, str]] = []
    for n in range(2000):
        pad = "é" * (n % 5)  # columns count characters, not bytes
        lines += [f"- metadata: {{name: pod-{n}, note: '{pad}'}}", "  spec:", "    containers:"]
        value = f"ghcr.io/team/app-{n}:v{n % 13}"
        lines.append(f"    - {{name: a{pad}, image: {value}}}" if n % 3 else f"    - image: '{value}'")
        expected.append((len(lines), lines[-1].index(value) + 1, value))
    text = newline.join(lines) + newline
    found = kinds.find("pods.yaml", text, "kubernetes").found
    assert [(f.line, f.column, f.value) for f in found] == expected
    assert [(f.line, f.column) for f in found] == [_naive(text, f.span.start) for f in found]


def test_thousands_of_references_in_a_template_are_each_where_written() -> None:
    lines = ["{{- range .Values.pods }}"]
    expected: list[tuple[int, int, str]] = []
    for n in range(2000):
        value = f"quay.io/team/app-{n}:{{{{ .Tag }}}}" if n % 4 == 0 else f"quay.io/team/app-{n}:v1"
        lines += [f"- name: pod-{n}", f"  image: {value}"]
        expected.append((len(lines), 10, value))
    text = "\n".join(lines) + "\n"
    found = kinds.find("pods.yaml", text, "kubernetes").found
    assert [(f.line, f.column, f.value) for f in found] == expected


def test_compose_services_merged_in_are_read() -> None:
    # Docker Compose reads YAML merge keys: a service merged in with `<<` runs as one written out.
    text = "x-svcs: &svcs\n  db: {image: evil.example/db:latest}\nservices:\n  <<: *svcs\n  web: {image: nginx:1.25}\n"
    found = kinds.find("compose.yaml", text, "compose").found
    assert [(f.line, f.value) for f in found] == [(2, "evil.example/db:latest"), (5, "nginx:1.25")]


# Go's YAML (Helm, kubectl, kustomize): escapes and `!!binary` decoded, the last of a key written twice.
@pytest.mark.parametrize("key", ["image", r'"\x69mage"', r'"\u0069mage"', r'"\U00000069mage"', "!!str image",
                                 "!!binary aW1hZ2U=", "? !!binary |\n    aW1h\n    Z2U=\n  "])
def test_a_key_is_read_decoded(key: str) -> None:
    document = compose(f"c:\n  {key}: nginx:1.25\n")[0]
    assert scalar_text(mapping_get(mapping_get(document, "c"), "image")) == "nginx:1.25"


def test_a_binary_value_is_read_as_the_text_it_encodes() -> None:
    document = compose("image: !!binary |\n  bmdpbng6\n  MS4yNQ==\n")[0]
    assert scalar_text(mapping_get(document, "image")) == "nginx:1.25"


def test_of_a_key_written_twice_the_last_is_read_and_the_first_recorded() -> None:
    document = compose("kind: CustomResourceDefinition\nspec: {}\nkind: Pod\n")[0]
    assert scalar_text(mapping_get(document, "kind")) == "Pod"
    assert [str(key.value) for key, _ in mapping_pairs(document)] == ["spec", "kind"]
    assert [(d.shadowed.start_mark.line, d.kept.start_mark.line) for d in yamlnodes.duplicates(document)] == [(0, 2)]


def test_a_merged_key_is_not_written_twice_and_the_own_key_wins() -> None:
    document = compose("base: &b {image: a:1}\nc:\n  <<: *b\n  image: b:2\n")[0]
    assert scalar_text(mapping_get(mapping_get(document, "c"), "image")) == "b:2"
    assert yamlnodes.duplicates(document) == []


@pytest.mark.parametrize(("text", "holds"), [
    ("image: x", True), ("name: x", False), (r'"\x69mage": x', True), ("!!binary aW1hZ2U=: x", True),
    ("!<tag:yaml.org,2002:binary> aW1hZ2U=: x", True),
    ("%TAG !e! tag:yaml.org,2002:\n---\n!e!binary aW1hZ2U=: x", True),
])
def test_may_hold_never_says_no_to_a_text_that_holds_the_word(text: str, holds: bool) -> None:
    assert yamlnodes.may_hold(text, "image") is holds
    if not holds:
        return
    document = compose(text)[0]
    assert mapping_get(document, "image") is not None


@pytest.mark.parametrize("newline", ["\n", "\r"])
def test_the_table_of_line_starts_is_the_same_built_a_piece_at_a_time(newline: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    rows = random.Random(11)
    text = "".join(rows.choice(f"ab é{newline}") for _ in range(3_000))
    for piece in (1, 2, 7, 64):
        monkeypatch.setattr(yamlnodes, "_PIECE", piece)
        starts = list(yamlnodes._line_starts(text, newline))
        assert starts == [0] + [i + 1 for i, char in enumerate(text) if char == newline]


def _marks(document: yaml.Node) -> list[tuple[int, int, int, int, object]]:
    marks, stack = [], [document]
    while stack:
        node = stack.pop()
        marks.append((node.start_mark.index, node.start_mark.line, node.start_mark.column, node.end_mark.index,
                      node.value if isinstance(node.value, str) else None))
        if isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return marks


def test_documents_read_a_piece_at_a_time_are_those_of_the_whole_string() -> None:
    """libyaml is handed the text in pieces (a whole string it would copy): every mark stays in characters."""
    wide = "\U0001d518"  # four bytes in UTF-8
    text = "".join(f"---\nname: '☕{'é' * (n % 9)}'\nitems: [ü{n}, {{k: {wide}}}]\nblock: |\n  ✓ {n}\n"
                   for n in range(800))
    whole = [doc for doc in yaml.compose_all(text, Loader=yaml.SafeLoader) if doc is not None]  # PyYAML's own reader
    assert [_marks(doc) for doc in yamlnodes.each_document(text)] == [_marks(doc) for doc in whole]


def test_a_syntax_error_is_raised_when_the_document_holding_it_is_reached() -> None:
    documents = yamlnodes.each_document("a: 1\n---\nb: [2\n")
    assert next(documents).value[0][1].value == "1"
    with pytest.raises(SourceError) as raised:
        next(documents)
    assert (raised.value.line, raised.value.column) == (4, 1)


def test_one_image_named_many_times_is_held_once() -> None:
    text = "".join(f"---\nkind: Pod\nspec: {{containers: [{{image: nginx:1.25}}, {{image: 'redis:{n % 2}'}}]}}\n"
                   for n in range(50))
    found = kinds.find("pods.yaml", text, "kubernetes").found
    assert len(found) == 100 and len({id(f.reference) for f in found}) == len({id(f.value) for f in found}) == 3
    assert {str(f.reference) for f in found} == {"docker.io/library/nginx:1.25", "docker.io/library/redis:0",
                                                 "docker.io/library/redis:1"}
