"""Generated inputs: every reference is found, pinning edits only the references, twice is once, nothing crashes.

Each example is written to a fresh folder and goes through `scan`, a lock that
knows every reference, and `pinguard pin`, as a user's files would.
"""
from __future__ import annotations

import hashlib
import io
import json
import tempfile
from collections.abc import Iterator
from contextlib import chdir, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.reference import Reference, parse
from pinguard.scan.paths import Scan, scan_paths
from pinguard.sources.base import Found
from pinguard.write.edits import apply, pin_edit
from testing import lockdata
from tests.sources.untouched import outside

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BOM = b"\xef\xbb\xbf"
OLD_DIGEST = "sha256:" + hashlib.sha256(b"an older build").hexdigest()

# References from a small alphabet: every form the grammar normalises differently.
REGISTRIES = ["", "docker.io/", "ghcr.io/", "quay.io/", "registry.example.com:5000/", "localhost:5000/",
              "public.ecr.aws/"]
REPOSITORIES = ["nginx", "library/redis", "team/app", "a/b/c", "my-app", "ml_train", "ray-project/ray"]
TAGS = [None, "latest", "1.25", "v1.2.3-rc1", "2.52.0-py311", "Nightly_2"]

references = st.builds(
    lambda registry, repository, tag, digest: (
        registry + repository + ("" if tag is None else ":" + tag) + ("@" + OLD_DIGEST if digest else "")
    ),
    st.sampled_from(REGISTRIES), st.sampled_from(REPOSITORIES), st.sampled_from(TAGS), st.booleans(),
)

# Text YAML reads as written: letters, digits, punctuation, symbols and spaces from all of Unicode.
printable = st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs"))


def _lock_key(reference: Reference) -> tuple[str, str] | None:
    """The lock entry a reference pins to (its tag, `latest` when bare), worked out independently."""
    if reference.tag is not None:
        return reference.name, reference.tag
    return None if reference.digest is not None else (reference.name, "latest")


def _pinned_value(value: str) -> str:
    """What pinning should make of a reference written as `value` (a build argument stays as it is)."""
    if "$" in value:
        return value
    reference = parse(value)
    key = _lock_key(reference)
    if key is None:
        return value
    tag = "" if reference.tag else ":latest"  # an untagged reference is written with the tag it was locked at
    return value.partition("@")[0] + tag + "@" + lockdata.locked_test_digest(*key)


@contextmanager
def _folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh folder per example, the current one while the example runs; the lock sits beside it."""
    with tempfile.TemporaryDirectory(dir=tmp_path_factory.getbasetemp()) as base:
        tree = Path(base) / "tree"
        tree.mkdir()
        with chdir(tree):
            yield tree


@dataclass(frozen=True)
class Outcome:
    status: int
    out: str
    err: str


def _pin(*args: str) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    status = main(["pin", "--lockfile", "../pinguard.lock", *args, "."], env={}, stdout=out, stderr=err)
    return Outcome(status, out.getvalue(), err.getvalue())


def _lock(result: Scan) -> None:
    lockfile.write(Path("../pinguard.lock"), lockdata.lock_for(result.found))


def _spans_hold_values(text: str, found: list[Found]) -> None:
    for item in found:
        assert text[item.span.start:item.span.end] == item.value, item


def _pin_and_check(name: str, data: bytes, expected: set[tuple[int, int, str]]) -> str:
    """Scan, lock and pin one file; check what every generated file must satisfy. Returns the new text."""
    path = Path(name)
    path.write_bytes(data)
    before = scan_paths(["."])
    assert before.errors == []
    (scanned,) = before.files
    text = scanned.file.text
    _spans_hold_values(text, scanned.found)
    # (a) every written reference is found where it is written, and parsed as written.
    assert {(f.line, f.column, f.value) for f in scanned.found} == expected
    assert len(scanned.found) == len(expected)  # once each, even where an alias reaches it again
    for item in scanned.found:
        if "$" not in item.value:
            assert item.reference == parse(item.value), item

    _lock(before)
    assert _pin() == Outcome(0, "pinned 1 file\n" if any(_pinned_value(v) != v for *_, v in expected) else "", "")
    new = path.read_bytes()
    # (c) the new bytes are the old ones with exactly the pin edits, the byte-order mark kept.
    edits = [pin_edit(f, _pinned_value(f.value).partition("@")[2]) for f in scanned.found
             if f.reference is not None and _pinned_value(f.value) != f.value]
    assert new == scanned.file.encode(apply(text, edits))
    assert new.startswith(BOM) == data.startswith(BOM)
    new_text = new.removeprefix(BOM).decode("utf-8")
    rest_old, rest_new = outside(text, new_text, edits)
    assert rest_new == rest_old
    # Every reference now carries its locked digest, where it was.
    after = scan_paths(["."])
    assert after.errors == []
    assert {(f.line, f.column, f.value) for f in after.found} == {
        (line, column, _pinned_value(value)) for line, column, value in expected
    }
    _spans_hold_values(new_text, after.found)
    # (b) a second pin has nothing to do.
    assert _pin() == Outcome(0, "", "")
    assert _pin("--dry-run") == Outcome(0, "", "")
    assert path.read_bytes() == new
    return new_text


# Kubernetes-like YAML, built as text so that styles, comments and positions are ours to choose.


@dataclass(frozen=True)
class Leaf:
    text: str  # as written in the file


@dataclass(frozen=True)
class Image:
    value: str
    style: str  # plain, single, double, tagged
    comment: str | None


@dataclass(frozen=True)
class Mapping:
    entries: tuple[tuple[str, Node], ...]


@dataclass(frozen=True)
class Sequence:
    items: tuple[Leaf | Mapping, ...]


@dataclass(frozen=True)
class Flow:
    entries: tuple[tuple[str, Leaf | Image], ...]


Node = Leaf | Image | Mapping | Sequence | Flow
N = TypeVar("N", bound=Node)

KEYS = ["name", "spec", "template", "containers", "args", "env", "value", "ports", "labels", "metadata", "data",
        "command", "resources", "größe", "名前", "x-y_z"]

words = st.text(alphabet=st.characters(categories=["L"]), min_size=1, max_size=8)
leaves = st.one_of(
    st.integers(-1000, 1000).map(lambda n: Leaf(str(n))),
    st.sampled_from(["true", "false", "null", "~", "1.5"]).map(Leaf),
    words.map(Leaf),  # plain, often non-ASCII
    st.text(printable, max_size=12).map(lambda s: Leaf(json.dumps(s, ensure_ascii=False))),
    st.text(printable, max_size=12).map(lambda s: Leaf("'" + s.replace("'", "''") + "'")),
)
comments = st.none() | st.text(printable, max_size=15).map(lambda s: "# " + s)
images = st.builds(Image, references, st.sampled_from(["plain", "single", "double", "tagged"]), comments)


def _one_image(entries: list[tuple[str, N]]) -> tuple[tuple[str, N], ...]:
    """Entries with at most one image, under the key `image`: no key repeats."""
    kept: list[tuple[str, N]] = []
    for key, node in entries:
        if isinstance(node, Image):
            if any(isinstance(n, Image) for _, n in kept):
                continue
            key = "image"
        kept.append((key, node))
    return tuple(kept)


def _mapping(entries: list[tuple[str, Node]]) -> Mapping:
    return Mapping(_one_image(entries))


def _flow(entries: list[tuple[str, Leaf | Image]]) -> Flow:
    return Flow(_one_image(entries))


flows = st.lists(st.tuples(st.sampled_from(KEYS), leaves | images), min_size=1, max_size=3,
                 unique_by=lambda kv: kv[0]).map(_flow)


def nodes(depth: int) -> st.SearchStrategy[Node]:
    scalars: st.SearchStrategy[Node] = st.one_of(leaves, images, images, flows)
    if depth == 0:
        return scalars
    maps = mappings(depth - 1)
    sequences = st.lists(leaves | maps, min_size=1, max_size=3).map(lambda items: Sequence(tuple(items)))
    containers = st.lists(  # what pod specs hold: a list of mappings, each with an image
        st.tuples(words.map(Leaf), images, st.lists(st.tuples(st.sampled_from(KEYS), nodes(0)), max_size=2)).map(
            lambda parts: _mapping([("name", parts[0]), ("image", parts[1]), *parts[2]])),
        min_size=1, max_size=3,
    ).map(lambda items: Sequence(tuple(items)))
    return st.one_of(scalars, maps, sequences, containers)


def mappings(depth: int) -> st.SearchStrategy[Mapping]:
    return st.lists(st.tuples(st.sampled_from(KEYS), nodes(depth)), min_size=1, max_size=4,
                    unique_by=lambda kv: kv[0]).map(_mapping)


@dataclass
class Lines:
    """Text being written line by line, with where each image value lands (1-based line and column)."""

    lines: list[str] = field(default_factory=list)
    images: list[tuple[int, int, str]] = field(default_factory=list)
    anchor: str | None = None  # the next image written gets this anchor, once
    anchored: bool = False

    def add(self, line: str) -> None:
        self.lines.append(line)

    def image_text(self, image: Image, column: int) -> str:
        """The written form of `image`, whose first character is at 0-based `column` of the next line."""
        opener, closer = {"plain": ("", ""), "single": ("'", "'"), "double": ('"', '"'),
                          "tagged": ("!!str ", "")}[image.style]
        if self.anchor is not None and not self.anchored:
            opener = f"&{self.anchor} " + opener
            self.anchored = True
        self.images.append((len(self.lines) + 1, column + len(opener) + 1, image.value))
        return opener + image.value + closer


def _comment(comment: str | None) -> str:
    return "" if comment is None else "  " + comment


def _write_flow(out: Lines, prefix: str, flow: Flow) -> None:
    text = prefix + "{"
    for index, (key, node) in enumerate(flow.entries):
        text += (", " if index else "") + key + ": "
        text += out.image_text(node, len(text)) if isinstance(node, Image) else node.text
    out.add(text + "}")


def _write_mapping(out: Lines, mapping: Mapping, indent: int) -> None:
    pad = " " * indent
    for key, node in mapping.entries:
        if isinstance(node, Leaf):
            out.add(f"{pad}{key}: {node.text}")
        elif isinstance(node, Image):
            prefix = f"{pad}{key}: "
            out.add(prefix + out.image_text(node, len(prefix)) + _comment(node.comment))
        elif isinstance(node, Flow):
            _write_flow(out, f"{pad}{key}: ", node)
        elif isinstance(node, Mapping):
            out.add(f"{pad}{key}:")
            _write_mapping(out, node, indent + 2)
        else:
            out.add(f"{pad}{key}:")
            _write_sequence(out, node, indent + 2)


def _write_sequence(out: Lines, sequence: Sequence, indent: int) -> None:
    pad = " " * indent
    for item in sequence.items:
        if isinstance(item, Leaf):
            out.add(f"{pad}- {item.text}")
        else:  # the item's first entry shares the dash's line: "- " is as wide as the indentation it replaces
            first = len(out.lines)
            _write_mapping(out, item, indent + 2)
            out.lines[first] = pad + "- " + out.lines[first][indent + 2:]


def _merge_value(aliases: list[str]) -> str:
    """The value of a merge key: one alias alone, or a list of them."""
    return aliases[0] if len(aliases) == 1 else "[" + ", ".join(aliases) + "]"


@dataclass(frozen=True)
class Manifest:
    data: bytes
    images: set[tuple[int, int, str]]


@st.composite
def manifests(draw: st.DrawFn) -> Manifest:
    out = Lines()
    for number in range(draw(st.integers(1, 3))):
        if number or draw(st.booleans()):
            out.add("---" + draw(st.sampled_from(["", "  # next"])))
        kind = draw(st.sampled_from(["Pod", "RayCluster", "Deployment", "JobSet"]))
        merged: list[str] = []  # what the document merges with `<<:`: its header, mappings merging one another
        if draw(st.booleans()):
            out.add(f"header: &header{number} {{apiVersion: v1, kind: {kind}}}")
            merged.append(f"*header{number}")
        else:
            out.add("apiVersion: v1")
            out.add("kind: " + kind)
        bases = draw(st.integers(0, 3))
        if bases:
            out.add("bases:")
        for index in range(bases):
            out.add(f"  b{index}: &base{number}_{index}")
            earlier = draw(st.lists(st.integers(0, index - 1), max_size=3)) if index else []
            if earlier:
                out.add("    <<: " + _merge_value([f"*base{number}_{e}" for e in earlier]))
            _write_mapping(out, draw(mappings(0)), 4)
        picked = draw(st.lists(st.integers(0, bases - 1), max_size=3)) if bases else []
        merged += [f"*base{number}_{index}" for index in picked]
        if merged:
            out.add("<<: " + _merge_value(merged))
        shared = draw(st.none() | mappings(1))  # a mapping anchored once and aliased later
        if shared is not None:
            out.add("shared: &shared" + str(number))
            _write_mapping(out, shared, 2)
        if draw(st.booleans()):  # an image scalar anchored where it is written and aliased at the end
            out.anchor = f"img{number}"
        _write_mapping(out, draw(mappings(2)), 0)
        if out.anchored:
            out.add(f"again: {{image: *{out.anchor}}}")
        out.anchor, out.anchored = None, False
        if shared is not None:
            out.add(f"reuse: *shared{number}")
    text = "\n".join(out.lines) + draw(st.sampled_from(["\n", ""]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    data = (BOM if draw(st.booleans()) else b"") + text.encode("utf-8")
    return Manifest(data, set(out.images))


def _with_pinned_images(document: Any) -> Any:
    """A loaded document with every `image` string as pinning should leave it."""
    if isinstance(document, dict):
        return {key: _pinned_value(value) if key == "image" and isinstance(value, str) else _with_pinned_images(value)
                for key, value in document.items()}
    if isinstance(document, list):
        return [_with_pinned_images(item) for item in document]
    return document


@SETTINGS
@given(manifest=manifests(), name=st.sampled_from(["pod.yaml", "manifests.yml", "ray-cluster.sample.yaml"]))
def test_generated_manifests_pin_exactly(tmp_path_factory: pytest.TempPathFactory, manifest: Manifest,
                                         name: str) -> None:
    with _folder(tmp_path_factory):
        new_text = _pin_and_check(name, manifest.data, manifest.images)
    # (d) the pinned file reads as the same data, only the image values gained their digest.
    old = list(yaml.safe_load_all(manifest.data.removeprefix(BOM).decode("utf-8")))
    assert list(yaml.safe_load_all(new_text)) == [_with_pinned_images(document) for document in old]


def test_an_aliased_image_is_reported_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    with _folder(tmp_path_factory):
        Path("pod.yaml").write_text("apiVersion: v1\nkind: Pod\na:\n  image: &img nginx:1.25\nb:\n  image: *img\n")
        found = scan_paths(["."]).found
    assert [(f.line, f.column, f.value) for f in found] == [(4, 15, "nginx:1.25")]


# Compose services that take their image through merge keys; the oracle resolves the merges on the model.

Written = tuple[int, int, str]  # where an image value is written: 1-based line and column, the value


def _resolved(own: Written | None, merges: tuple[int, ...], bases: list[tuple[Written | None, tuple[int, ...]]]
              ) -> Written | None:
    """The image a mapping has, as the merge key's spec says: its own, else the first merged mapping's."""
    if own is not None:
        return own
    for index in merges:
        found = _resolved(*bases[index], bases)
        if found is not None:
            return found
    return None


def _write_part(draw: st.DrawFn, out: Lines, earlier: int, indent: int) -> tuple[Written | None, tuple[int, ...]]:
    """A base or service merging some of the `earlier` bases: where its own image is written, what it merges."""
    pad = " " * indent
    merges = tuple(draw(st.lists(st.integers(0, earlier - 1), max_size=3))) if earlier else ()
    merge_line = pad + "<<: " + _merge_value([f"*base{index}" for index in merges])
    merge_first = draw(st.booleans())  # own keys win wherever the merge key is written
    if merges and merge_first:
        out.add(merge_line)
    out.add(pad + "restart: always")
    own = None
    image = draw(st.none() | images)
    if image is not None:
        prefix = pad + "image: "
        out.add(prefix + out.image_text(image, len(prefix)) + _comment(image.comment))
        own = out.images[-1]
    if merges and not merge_first:
        out.add(merge_line)
    return own, merges


@st.composite
def compose_files(draw: st.DrawFn) -> Manifest:
    out = Lines()
    bases: list[tuple[Written | None, tuple[int, ...]]] = []
    for index in range(draw(st.integers(0, 5))):
        out.add(f"x-base{index}: &base{index}")
        bases.append(_write_part(draw, out, index, 2))
    out.add("services:")
    resolved: set[Written] = set()
    for index in range(draw(st.integers(1, 4))):
        if draw(st.booleans()) and bases:  # the service is a base itself
            aliased = draw(st.integers(0, len(bases) - 1))
            out.add(f"  s{index}: *base{aliased}")
            image = _resolved(*bases[aliased], bases)
        else:
            out.add(f"  s{index}:")
            image = _resolved(*_write_part(draw, out, len(bases), 4), bases)
        if image is not None:
            resolved.add(image)
    text = "\n".join(out.lines) + "\n"
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return Manifest((BOM if draw(st.booleans()) else b"") + text.encode("utf-8"), resolved)


@SETTINGS
@given(compose_file=compose_files())
def test_compose_services_pin_the_image_their_merges_resolve_to(tmp_path_factory: pytest.TempPathFactory,
                                                                compose_file: Manifest) -> None:
    with _folder(tmp_path_factory):
        _pin_and_check("compose.yaml", compose_file.data, compose_file.images)


# Dockerfiles.


@dataclass
class DockerLines:
    lines: list[str] = field(default_factory=list)
    images: set[tuple[int, int, str]] = field(default_factory=set)

    def add(self, line: str, value: str | None = None, column: int = 0) -> None:
        """Add a line; `value`, when given, is a reference written at 0-based `column`."""
        self.lines.append(line)
        if value is not None:
            self.images.add((len(self.lines), column + 1, value))


@st.composite
def dockerfiles(draw: st.DrawFn) -> tuple[bytes, set[tuple[int, int, str]]]:
    out = DockerLines()
    blank = st.sampled_from([" ", "\t", "  ", " \t"])
    if draw(st.booleans()):
        out.add("# syntax=docker/dockerfile:1", "docker/dockerfile:1", len("# syntax="))  # the frontend image
    escape = draw(st.sampled_from(["\\", "`"]))  # the line continuation character
    if escape == "`":
        out.add("# escape=`")
    out.add("# a comment — ünïcode")
    arguments: dict[str, tuple[int, int, str]] = {}  # global ARGs holding an image: where the default is
    for index in range(draw(st.integers(0, 3))):
        value = draw(references)
        quote = draw(st.sampled_from(["", '"']))
        prefix = "ARG" + draw(blank) + draw(st.sampled_from(["", "OTHER=1 "])) + f"BASE{index}={quote}"
        out.add(prefix + value + quote)
        arguments[f"BASE{index}"] = (len(out.lines), len(prefix) + 1, value)
    out.add("ARG VERSION=1.25")
    stages: list[str] = []
    for number in range(draw(st.integers(1, 4))):
        keyword = draw(st.sampled_from(["FROM", "from", "From"]))
        flag = draw(st.sampled_from(["", "--platform=linux/amd64", "--platform=$BUILDPLATFORM"]))
        kind = draw(st.sampled_from(["image", "image", "argument", "stage", "scratch", "templated"]))
        name = f"stage{number}"
        suffix = draw(st.sampled_from(["", f" AS {name}", f" as {name}", f"\tAS\t{name}"]))
        head = keyword + draw(blank) + (flag + draw(blank) if flag else "")
        if draw(st.booleans()):  # the image on a continuation line
            out.add(head + escape)
            head = draw(st.sampled_from(["    ", "\t"]))
        if kind == "argument" and arguments:
            argument = draw(st.sampled_from(sorted(arguments)))
            written = draw(st.sampled_from([f"${argument}", f"${{{argument}}}"]))
            out.add(head + written + suffix)
            out.images.add(arguments[argument])  # reported, and pinned, where the default is written
        elif kind == "stage" and stages:
            out.add(head + draw(st.sampled_from(stages)) + suffix)
        elif kind == "scratch":
            out.add(head + "scratch" + suffix)
        elif kind == "templated":
            out.add(head + "nginx:${VERSION}" + suffix, "nginx:${VERSION}", len(head))
        else:
            value = draw(references)
            quote = draw(st.sampled_from(["", "", '"']))
            out.add(head + quote + value + quote + suffix, value, len(head + quote))
        if suffix:
            stages.append(name)
        for _ in range(draw(st.integers(0, 3))):
            step = draw(st.sampled_from(["run", "continued", "copy-stage", "copy-image", "arg", "comment", "blank"]))
            if step == "run":
                out.add("RUN" + draw(blank) + "echo hello")
            elif step == "continued":
                out.add("RUN echo one " + escape)
                out.add("\t&& echo two")
            elif step == "copy-stage" and stages:
                out.add(f"COPY --from={draw(st.sampled_from(stages))} /src /dst")
            elif step == "copy-image":
                value = draw(references)
                out.add(f"COPY --from={value} /src /dst", value, len("COPY --from="))
            elif step == "arg":
                out.add("ARG LOCAL=1")
            elif step == "comment":
                out.add("# FROM not:an-instruction")
            else:
                out.add("")
    text = "\n".join(out.lines) + draw(st.sampled_from(["\n", ""]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return (BOM if draw(st.booleans()) else b"") + text.encode("utf-8"), out.images


@SETTINGS
@given(dockerfile=dockerfiles(), name=st.sampled_from(["Dockerfile", "build.Dockerfile", "Dockerfile.cuda",
                                                        "Containerfile"]))
def test_generated_dockerfiles_pin_exactly(tmp_path_factory: pytest.TempPathFactory,
                                           dockerfile: tuple[bytes, set[tuple[int, int, str]]], name: str) -> None:
    data, expected = dockerfile
    with _folder(tmp_path_factory):
        _pin_and_check(name, data, expected)


# Malformed input: whatever the file holds, scan and pin end with a status, never a traceback.

NAMES = ["x.yaml", "Dockerfile", "compose.yaml", "values.yaml", "kustomization.yaml", "runtime_env.json"]
VALID = [
    "services:\n  web:\n    image: nginx:1.25  # the front\n    ports: ['80:80']\n  db: {image: 'postgres:16'}\n",
    "image:\n  registry: docker.io\n  repository: bitnami/nginx\n  tag: 1.29.1\n  digest: \"\"\nsidecar:\n"
    "  image: {repository: quay.io/x/y, tag: v1}\n",
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n- name: app\n  newName: "
    "ghcr.io/team/app\n  newTag: v2\n- name: redis\n  newTag: '7'\n  digest: ~\n",
    '{"image_uri": "rayproject/ray:2.52.0", "container": {"image": "rayproject/ray:2.51.0"}, "pip": ["x"]}\n',
    "ARG BASE=python:3.12\nFROM ${BASE} AS build\nRUN <<EOF\necho hi\nEOF\nCOPY --from=build /a /b\n"
    "FROM --platform=$BUILDPLATFORM \\\n  golang:1.22 AS go\nRUN --mount=type=cache,from=alpine:3,target=/c true\n",
    "apiVersion: ray.io/v1\nkind: RayJob\nspec:\n  runtimeEnvYAML: |\n    image_uri: rayproject/ray:2.52.0\n"
    "  submitterPodTemplate:\n    spec:\n      containers:\n      - image: \"rayproject/ray:2.52.0\"\n",
    "jobs:\n  test:\n    container: node:20\n    services:\n      db:\n        image: postgres:16\n    steps:\n"
    "    - uses: docker://alpine:3.19\non: push\n",
    "spec:\n  image: {{ .Values.image }}\n  other: ${TAG}\n",
]
NOISE = [*":-[]{}'\"#&*!|>%@`,?\t\n\\$ \r", "{{", "${", "<<", "\ufeff", "é", "\x00", "\x85", "\u2028", "---\n"]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(VALID) | manifests().map(lambda m: m.data.decode("utf-8-sig"))
                | dockerfiles().map(lambda d: d[0].decode("utf-8-sig")))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        operation = draw(st.sampled_from(["truncate", "insert", "delete"]))
        if operation == "truncate":
            text = text[:at]
        elif operation == "insert":
            text = text[:at] + draw(st.sampled_from(NOISE) | st.text(max_size=3)) + text[at:]
        else:
            text = text[:at] + text[at + draw(st.integers(1, 8)):]
    return text


contents = st.one_of(
    st.text().map(lambda s: s.encode("utf-8")),
    st.binary().map(lambda b: b.decode("utf-8", "replace").encode("utf-8")),
    st.binary(),
    mutated().map(lambda s: s.encode("utf-8")),
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=contents, name=st.sampled_from(NAMES))
def test_malformed_files_never_crash(tmp_path_factory: pytest.TempPathFactory, data: bytes, name: str) -> None:
    with _folder(tmp_path_factory):
        path = Path(name)
        path.write_bytes(data)
        result = scan_paths(["."])
        _lock(result)
        outcome = _pin()
        assert "Traceback" not in outcome.out + outcome.err
        assert outcome.status in (0, 1, 2)
        if result.errors:  # nothing is written when any file cannot be read
            assert outcome.status == 2
            assert path.read_bytes() == data
            return
        assert outcome.status == 0, outcome.err
        for scanned in result.files:
            _spans_hold_values(scanned.file.text, scanned.found)
        if b"\r" not in data.replace(b"\r\n", b""):  # a lone CR is a line break YAML counts and pinguard does not
            pinned = path.read_bytes()
            assert _pin() == Outcome(0, "", "")
            assert path.read_bytes() == pinned


# Single cases the generators above do not reach.


def _chart_reading_digest() -> None:
    """Values of a chart, not at hand, that the policy says reads `image.digest`: they are pinned in that field.

    No chart at hand, as without Helm nothing is written into one's values (`pin_needs_helm_test.py`).
    """
    Path(".pinguard.yaml").write_text("helm:\n  digest-read: ['values.yaml']\n")


def test_a_values_file_with_cr_line_breaks_gets_its_digest_in_the_image(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    with _folder(tmp_path_factory):
        _chart_reading_digest()
        Path("values.yaml").write_bytes(b'image:\r  repository: nginx\r  tag: "1.25"\rother:\r  x: 1\r')
        _lock(scan_paths(["."]))
        assert _pin().status == 0
        pinned = yaml.safe_load(Path("values.yaml").read_bytes())
        assert pinned["image"].get("digest") == lockdata.locked_test_digest("docker.io/library/nginx", "1.25")
        assert pinned["other"] == {"x": 1}


def test_a_structured_image_written_with_escapes_reports_its_own_text(tmp_path_factory: pytest.TempPathFactory) -> None:
    # The span is measured back from the scalar's end; with escapes the text there is not the parsed value.
    with _folder(tmp_path_factory):
        text = 'image:\n  repository: "ngi\\x6ex"\n  tag: "1.25"\n'
        Path("values.yaml").write_text(text)
        (found,) = scan_paths(["."]).found
    assert text[found.span.start:found.span.end] == found.value
    assert found.reference is None  # not offered for pinning: the text is not what it means


def test_a_digest_added_on_the_last_line_keeps_crlf(tmp_path_factory: pytest.TempPathFactory) -> None:
    with _folder(tmp_path_factory):
        _chart_reading_digest()
        Path("values.yaml").write_bytes(b'image:\r\n  repository: nginx\r\n  tag: "1.25"')
        _lock(scan_paths(["."]))
        assert _pin().status == 0
        pinned = Path("values.yaml").read_bytes()
    assert b"digest: " in pinned
    assert b"\n" not in pinned.replace(b"\r\n", b"")


def test_a_compose_image_merged_from_an_extension_field_is_found(tmp_path_factory: pytest.TempPathFactory) -> None:
    with _folder(tmp_path_factory):
        Path("compose.yaml").write_text(
            "x-base: &base\n  image: nginx:1.25\n  restart: always\nservices:\n  web:\n    <<: *base\n"
        )
        found = scan_paths(["."]).found
    assert [(f.line, f.column, f.value) for f in found] == [(2, 10, "nginx:1.25")]


def test_a_compose_service_aliased_twice_is_reported_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    with _folder(tmp_path_factory):
        Path("compose.yaml").write_text("x-web: &web\n  image: nginx:1.25\nservices:\n  a: *web\n  b: *web\n")
        found = scan_paths(["."]).found
    assert [(f.line, f.column, f.value) for f in found] == [(2, 10, "nginx:1.25")]
