"""Where a digest can be written in a chart's values: every placement leaves YAML that reads, changed at one key.

Values blocks are generated in the shapes charts write (empty, null and quoted-empty values,
trailing comments, flow mappings on one line or many, block scalars, any indentation, LF,
CRLF or CR line breaks, with or without a final one), traced as pinning traces a rendered
image, and every placement is applied; then a real chart in the shape external-dns ships is
pinned through Helm.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pinguard.helm.judge import Judge, JudgedChart, found_in
from pinguard.helm.pinning import plan_chart
from pinguard.helm.placements import placements
from pinguard.helm.settings import HelmSettings
from pinguard.helm.trace import Leaves, Parts
from pinguard.sources.yamlnodes import compose
from pinguard.write.edits import apply

DIGEST = "sha256:" + hashlib.sha256(b"the build pinned").hexdigest()
OLD_DIGEST = "sha256:" + hashlib.sha256(b"an older build").hexdigest()
REPOSITORY = "registry.example.com/team/app"
APP_VERSION = "9.8.7"  # the tag a chart renders for an empty or missing tag
VALUES = Path("values.yaml")

# How a tag is written, and the tag Helm renders from it (None: the chart's appVersion, as for an empty tag).
TAG_SHAPES: dict[str, str | None] = {
    "": None, "~": None, "null": None, "Null": None, "NULL": None, '""': None, "''": None,
    "v1.2.3": "v1.2.3", '"v1.2.3"': "v1.2.3", "'v1.2.3'": "v1.2.3", "\nv1.2.3": "v1.2.3",
    "1.10": "1.1", "2": "2", "yes": "true", "010": "8",  # numbers and booleans: written as the string Helm prints
    "|-\nv1.2.3": "v1.2.3", ">-\nv1.2.3": "v1.2.3", "|\nv1.2.3": None, ">\nv1.2.3": None,
}
NAME_SHAPES = [REPOSITORY, f'"{REPOSITORY}"', f"\n{REPOSITORY}", f"|-\n{REPOSITORY}"]
DIGEST_SHAPES = ["", "~", "null", '""', "''", OLD_DIGEST, f'"{OLD_DIGEST}"', f"'{OLD_DIGEST}'"]
COMMENTS = ["", " # pinned later", "  # @schema type:[string, null]", " #", " # tag: x, y: {z}"]
BREAKS = ["\n", "\r\n", "\r"]


@dataclass(frozen=True)
class Entry:
    key: str
    value: str  # a block scalar: its header, a line break, its one content line
    comment: str
    trailing: str = ""  # blanks after an empty value

    def block_lines(self, pad: str) -> list[str]:
        header, _, content = self.value.partition("\n")
        first = f"{pad}{self.key}:{' ' + header if header else self.trailing}{self.comment}"
        return [first, f"{pad}  {content}"] if content else [first]

    def flow(self) -> str:
        return f"{self.key}:{' ' + self.value if self.value else self.trailing or ' '}"  # `tag:,` is no entry


@dataclass(frozen=True)
class Values:
    text: str
    at: tuple[str | int, ...]  # the block's place in the parsed values
    image: str  # as the chart renders it
    tag: Entry | None
    digest: Entry | None


@st.composite
def values_files(draw: st.DrawFn) -> Values:
    flow = draw(st.booleans())
    tag_shapes = [shape for shape in TAG_SHAPES if not (flow and "\n" in shape)]  # no block scalar in a flow mapping
    tag = draw(st.none() | st.builds(Entry, st.sampled_from(["tag", "version"]), st.sampled_from(tag_shapes),
                                     st.sampled_from(COMMENTS), st.sampled_from(["", "  "])))
    digest = draw(st.none() | st.builds(Entry, st.sampled_from(["digest", "sha"]), st.sampled_from(DIGEST_SHAPES),
                                        st.sampled_from(COMMENTS), st.sampled_from(["", " "])))
    names = [shape for shape in NAME_SHAPES if not (flow and "\n" in shape)]
    name = Entry("repository", draw(st.sampled_from(names)), draw(st.sampled_from(COMMENTS)))
    policy = Entry("pullPolicy", "IfNotPresent", draw(st.sampled_from(COMMENTS)))
    entries = draw(st.permutations([entry for entry in (name, tag, digest, policy) if entry is not None]))
    parents = draw(st.lists(st.sampled_from(["app", "image", "main"]), max_size=2, unique=True))
    width = draw(st.sampled_from([2, 4]))
    item = bool(parents) and draw(st.booleans())
    lines, at = _nested(parents, item, width, _block(entries, flow, draw(st.booleans()), width))
    if parents:
        lines = [*draw(st.sampled_from([[], ["before: 1"], ["# values", ""], ["---"]])), *lines,
                 *draw(st.sampled_from([[], ["after: {x: 1}"], ["other:", "  replicas: 3", "# end"], ["..."]]))]
    brk = draw(st.sampled_from(BREAKS))
    text = brk.join(lines) + (brk if draw(st.booleans()) else "")
    rendered = TAG_SHAPES[tag.value] if tag is not None else None
    return Values(text, at, f"{REPOSITORY}:{rendered or APP_VERSION}", tag, digest)


def _block(entries: list[Entry], flow: bool, one_line: bool, width: int) -> list[tuple[int, str]]:
    """The block's lines, each with its indentation relative to the block's keys; a flow mapping's first line goes
    after its key."""
    if not flow:
        return [(0, line) for entry in entries for line in entry.block_lines("")]
    if one_line and not any(entry.comment for entry in entries):
        return [(0, "{" + ", ".join(entry.flow() for entry in entries) + "}")]
    last = len(entries) - 1
    return [(0, "{"), *((width, entry.flow() + ("," if index < last else "") + entry.comment)
                        for index, entry in enumerate(entries)), (0, "}")]


def _nested(parents: list[str], item: bool, width: int,
            block: list[tuple[int, str]]) -> tuple[list[str], tuple[str | int, ...]]:
    """The block under its parents' keys (the last perhaps a sequence holding it), and its place in the values."""
    lines: list[str] = []
    column = 0
    for depth, parent in enumerate(parents):
        inline = depth == len(parents) - 1 and not item and block[0][1].startswith("{")
        lines.append(f"{' ' * column}{parent}:{' ' + block.pop(0)[1] if inline else ''}")
        column += width
    at: tuple[str | int, ...] = tuple(parents)
    if item:
        lines.append(f"{' ' * column}- sibling: 1")
        column += 2
        at += (1,)
        first, *rest = block
        lines.append(f"{' ' * (column - 2)}- {first[1]}")
        block = rest
    lines.extend(f"{' ' * (column + indent)}{line}" for indent, line in block)
    return lines, at


def _at(document: Any, at: tuple[str | int, ...]) -> dict[str, Any]:
    for step in at:
        document = document[step]
    assert isinstance(document, dict)
    return document


def _breaks(text: str) -> set[str]:
    return set(re.findall(r"\r\n|\r|\n", text))


@settings(max_examples=400, deadline=None)
@given(values_files())
def test_every_placement_writes_yaml_that_reads_with_one_value_changed(values: Values) -> None:
    trace = Leaves([(VALUES, values.text, ())]).trace(values.image)
    assert trace is not None and trace.block is not None
    found = placements(trace, values.image, DIGEST)
    before = yaml.safe_load(values.text)
    tag = Parts.of(values.image).tag
    allowed = {(key, DIGEST) for key in ("digest", "sha")} | {("sha", DIGEST.partition(":")[2])} | \
        {(key, f"{tag}@{DIGEST}") for key in ("tag", "version")}
    for placement in found:
        for path, edit in placement.edits:
            assert path == VALUES.resolve()
            text = apply(values.text, [edit])
            assert text[:edit.start] == values.text[:edit.start]
            assert text[edit.start + len(edit.text):] == values.text[edit.end:]
            assert _breaks(text) <= _breaks(values.text) or not _breaks(values.text), placement.name
            compose(text)  # pinguard reads it: a SourceError otherwise
            after = yaml.safe_load(text)
            block, was = _at(after, values.at), _at(before, values.at)
            (key,) = [key for key in block.keys() | was.keys() if block.get(key, ...) != was.get(key, ...)]
            assert (key, block[key]) in allowed, placement.name
            if key in was:
                block[key] = was[key]
            else:
                del block[key]
            assert after == before, placement.name
    editable = {p.name for p in found if p.edits}
    assert editable
    if values.digest is not None:
        assert f"in `{values.digest.key}`" in editable
    if values.tag is not None and TAG_SHAPES[values.tag.value] and not values.tag.value.startswith(("|", ">")):
        assert "in the tag" in editable
    if values.tag is not None and values.tag.value in ("", "~", "null", "Null", "NULL", '""', "''"):
        assert f"in the empty `{values.tag.key}:`, with the tag it renders" in editable


@pytest.mark.parametrize(("text", "written"), [
    ("image:\n  repository: r\n  tag: |-\n    1.0\nafter: x\n", "image:\n  repository: r\n  tag: |-\n    1.0\n"
                                                                "  digest: @\nafter: x\n"),
    ("image:\n  repository: r\n  tag: >-\n    1.0\n\n\n  pullPolicy: x\n",
     "image:\n  repository: r\n  tag: >-\n    1.0\n\n\n  digest: @\n  pullPolicy: x\n"),
    ("- repository: r\n  tag: '1.0'", "- repository: r\n  tag: '1.0'\n  digest: @"),
    ("image: {repository: r,\n  tag: '1.0'  # c\n}\n", "image: {repository: r,\n  tag: '1.0', digest: @  # c\n}\n"),
])
def test_a_digest_added_after_the_tag_starts_the_line_after_the_value(text: str, written: str) -> None:
    trace = Leaves([(VALUES, text, ())]).trace("r:1.0")
    assert trace is not None
    (placement,) = [p for p in placements(trace, "r:1.0", DIGEST) if p.name == "in a new `digest:`"]
    assert apply(text, [edit for _, edit in placement.edits]) == written.replace("@", DIGEST)


@pytest.mark.parametrize("text", [
    "image:\n  repository: r\n  tag: !!str\n",  # an explicit tag on an empty value: refused, not guessed
    "base: &base {tag: ''}\nimage:\n  <<: *base\n  repository: r\n",  # every mapping merging `base` reads it
])
def test_an_empty_tag_pinguard_cannot_fill_safely_has_no_edits(text: str) -> None:
    trace = Leaves([(VALUES, text, ())]).trace("r:1.0")
    assert trace is not None
    (placement,) = [p for p in placements(trace, "r:1.0", DIGEST) if p.name.startswith("in the empty `tag:`")]
    assert placement.edits == ()


def test_an_anchored_number_keeps_its_anchor_as_the_tag_it_prints_is_written() -> None:
    text = "image:\n  repository: r\n  tag: &t 1.10 # c\nother: *t\n"
    trace = Leaves([(VALUES, text, ())]).trace("r:1.1")
    assert trace is not None
    (placement,) = [p for p in placements(trace, "r:1.1", DIGEST) if p.name == "in the tag"]
    written = apply(text, [edit for _, edit in placement.edits])
    assert written == text.replace("1.10", f'"1.1@{DIGEST}"')
    assert yaml.safe_load(written)["other"] == f"1.1@{DIGEST}"


TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: external-dns
spec:
  template:
    spec:
      containers:
        - name: external-dns
          image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
"""
EXTERNAL_DNS = "registry.k8s.io/external-dns/external-dns"


def _chart(root: Path, helm: str, values: str) -> JudgedChart:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: external-dns\nversion: 1.14.0\nappVersion: 0.14.0\n")
    (root / "templates" / "deployment.yaml").write_text(TEMPLATE)
    (root / "values.yaml").write_text(values)
    chart = Judge(HelmSettings(binary=helm), os.environ).chart_at(root)
    assert chart is not None and chart.failure is None
    return chart


PINNED_TAG = f'tag: "0.14.0@{DIGEST}"'
SCHEMA = "  # @schema type:[string, null]"  # as helm-schema writes it, after an empty tag


@pytest.mark.parametrize(("values", "empty"), [
    (f"image:\n  repository: {EXTERNAL_DNS}\n  tag:{SCHEMA}\n  pullPolicy: IfNotPresent\n", "tag:"),
    (f"image:\n  repository: {EXTERNAL_DNS}\n  tag: ~\n", "tag: ~"),
    (f"image: {{repository: {EXTERNAL_DNS}, tag: }}\n", "tag:"),
    (f"image: {{\n  repository: {EXTERNAL_DNS},\n  tag:{SCHEMA}\n}}\n", "tag:"),
], ids=["comment", "null", "flow", "flow-lines"])
def test_an_empty_tag_helm_fills_with_the_app_version_is_pinned_where_it_is_written(
        helm: str, tmp_path: Path, values: str, empty: str) -> None:
    chart = _chart(tmp_path / "external-dns", helm, values)
    wanted = [(found, DIGEST) for found in found_in(chart, chart.root / "values.yaml")]
    assert [found.rendered for found, _ in wanted] == [f"{EXTERNAL_DNS}:0.14.0"]
    plan = plan_chart(chart, wanted)
    assert plan.refused == []
    assert plan.texts == {(chart.root / "values.yaml").resolve(): values.replace(empty, PINNED_TAG)}
