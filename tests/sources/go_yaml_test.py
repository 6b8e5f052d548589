"""Generated manifests: `scan`, `check`, `pin` and `post-render` read every document as Go's YAML does.

Keys written twice, keys written with escapes or tags, `!!binary` and `!!str` values,
anchors, aliases and merge keys: each example goes through the four commands and
through `go_yaml_oracle`, which reads YAML apart from pinguard's code, and the images
each names must be the oracle's.
"""
from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.reference import parse
from pinguard.scan.paths import scan_paths
from testing.lockdata import locked_test_digest
from tests.sources import go_yaml_oracle

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
REFERENCES = ["nginx:1.25", "ghcr.io/team/app:v1", "redis:7", "quay.io/a/b:2.0"]
KEYS = ["image", '"image"', r'"\x69mage"', r'"\u0069mage"', r'"\U00000069mage"', "!!str image", "!!binary aW1hZ2U="]
KINDS = ["kind: Pod", "kind: CustomResourceDefinition\nkind: Pod", "kind: Pod\nkind: CustomResourceDefinition",
         r'"\x6bind": Pod']
EDITABLE, ESCAPED, BINARY, STR, LOCAL, QUOTED = "plain", "escaped", "binary", "str", "local", "quoted"
FORMS = [EDITABLE, ESCAPED, BINARY, STR, LOCAL, QUOTED]


def _written(reference: str, form: str) -> str:
    """`reference` as a YAML value in `form`."""
    if form == ESCAPED:
        return f'"\\x{ord(reference[0]):02x}{reference[1:]}"'
    if form == BINARY:
        return "!!binary " + base64.b64encode(reference.encode()).decode()
    return {EDITABLE: reference, STR: f"!!str {reference}", LOCAL: f"!local {reference}",
            QUOTED: f'"{reference}"'}[form]


@dataclass(frozen=True)
class Container:
    key: str
    reference: str
    again: tuple[str, str] | None  # the image key written again: its spelling and reference
    merged: int  # 0: its own image; 1: `- *base`; 2: `<<: *base` alone; 3: `<<: *base` and its own image


containers = st.builds(Container, st.sampled_from(KEYS), st.sampled_from(REFERENCES),
                       st.one_of(st.none(), st.tuples(st.sampled_from(KEYS), st.sampled_from(REFERENCES))),
                       st.sampled_from([0, 0, 1, 2, 3]))


@dataclass(frozen=True)
class Document:
    kind: str
    base: tuple[str, str] | None  # `x-base: &base {name, image}`: its key and reference
    containers: list[Container]
    again: list[Container] | None  # `containers:` written a second time


documents = st.builds(Document, st.sampled_from(KINDS),
                      st.one_of(st.none(), st.tuples(st.sampled_from(KEYS), st.sampled_from(REFERENCES))),
                      st.lists(containers, min_size=1, max_size=3),
                      st.one_of(st.none(), st.lists(containers, min_size=1, max_size=2)))


def _container(index: int, container: Container, forms: dict[str, str], base: bool) -> str:
    merged = container.merged if base else 0
    if merged == 1:
        return "  - *base\n"
    lines = ["<<: *base"] if merged else []
    lines.append(f"name: c{index}")
    if merged != 2:
        lines.append(f"{container.key}: {_written(container.reference, forms[container.reference])}")
        if container.again is not None:
            key, reference = container.again
            lines.append(f"{key}: {_written(reference, forms[reference])}")
    return "  - " + "\n    ".join(lines) + "\n"


def _text(document: Document, forms: dict[str, str]) -> str:
    text = f"apiVersion: v1\n{document.kind}\nmetadata:\n  name: p\n"
    if document.base is not None:
        key, reference = document.base
        text += f"x-base: &base\n  name: base\n  {key}: {_written(reference, forms[reference])}\n"
    text += "spec:\n  containers:\n"
    text += "".join(_container(i, c, forms, document.base is not None) for i, c in enumerate(document.containers))
    if document.again is not None:
        text += "  containers:\n" + "".join(
            _container(i, c, forms, document.base is not None) for i, c in enumerate(document.again))
    return text


def _lock() -> Lock:
    refs = [parse(reference) for reference in REFERENCES]
    entries = [LockEntry(name=ref.name, tag=str(ref.tag), digest=locked_test_digest(ref.name, str(ref.tag)),
                         media_type="application/vnd.oci.image.manifest.v1+json", size=0, tag_kind="other",
                         frozen_tag=None, resolved_at="2026-11-30T00:00:00Z", platforms={}) for ref in refs]
    return Lock().with_entries(entries)


def _normal(images: set[str]) -> set[str]:
    return {str(parse(image)) for image in images}


def _pinned(image: str) -> str:
    reference = parse(image)
    return str(reference.with_digest(locked_test_digest(reference.name, str(reference.tag))))


def _run(*args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), env={}, stdout=out, stderr=err, stdin=io.BytesIO(stdin))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    lockfile.write(tmp_path / "pinguard.lock", _lock())
    return tmp_path


@SETTINGS
@given(stream=st.lists(documents, min_size=1, max_size=2),
       forms=st.fixed_dictionaries({reference: st.sampled_from(FORMS) for reference in REFERENCES}))
def test_every_command_reads_yaml_as_go_does(tree: Path, stream: list[Document], forms: dict[str, str]) -> None:
    text = "---\n".join(_text(document, forms) for document in stream)
    go = go_yaml_oracle.read(text)
    images = _normal(go.images)
    unpinnable = {image for image in images if forms[_spelled(image)] in (ESCAPED, BINARY)}
    Path("pod.yaml").write_text(text)

    found = scan_paths(["pod.yaml"]).found
    assert {str(item.reference or item.decoded) for item in found} == images, text

    status, out, _ = _run("check", "pod.yaml")
    assert _normal(set(re.findall(r"`([^`]+)` has no digest", out))) == images - unpinnable, out
    assert _normal(set(re.findall(r"reads as (\S+), which", out))) == unpinnable, out
    assert ("[duplicate-key]" in out) == bool(go.written_twice), out
    assert status == (1 if images or go.written_twice else 0), out

    _run("pin", "pod.yaml")
    after = _normal(go_yaml_oracle.read(Path("pod.yaml").read_text()).images)
    assert after == {_pinned(image) for image in images - unpinnable} | unpinnable, text

    status, out, err = _run("post-render", stdin=text.encode())
    if go.written_twice:
        assert status == 2 and "written twice" in err and out == "", err
    elif unpinnable:
        assert status == 2 and _normal(set(re.findall(r"reads as (\S+):", err))) == unpinnable, err
    else:
        assert status == 0, err
        assert _normal(go_yaml_oracle.read(out).images) == {_pinned(image) for image in images}, out


def _spelled(image: str) -> str:
    """The reference of REFERENCES that normalises to `image`."""
    return next(reference for reference in REFERENCES if str(parse(reference)) == image)
