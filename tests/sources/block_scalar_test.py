"""Images written as block scalars (`image: |`, `>-`, `|2+`, ...): one line is found and pinned on it; more is reported."""

# One case per line reads as a truth table; wrapping the rows would hide that.
# ruff: noqa: E501
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, ScalarNode

from pinguard.reference import parse
from pinguard.sources import kubernetes
from pinguard.sources.base import Found
from pinguard.sources.yamlnodes import compose, mapping_get
from pinguard.write.edits import apply, pin_edit

D = "sha256:" + "0123456789abcdef" * 4
UNPINNABLE = "written with escapes or as a block scalar; write it as a plain or quoted value to pin it"
NEWLINES = ["\n", "\r\n", "\r"]

# fmt: off
# The `image` value of `kind: Pod` / `spec:` / `  image: ...`, and what is found: (line, column, value, problem).
CASES: list[tuple[str, str, tuple[int, int, str, str | None]]] = [
    # name                    image value as written                                found
    ("literal",               "|\n    nginx:1.25\n",                                (4, 5, "nginx:1.25", None)),
    ("literal-strip",         "|-\n    nginx:1.25\n",                               (4, 5, "nginx:1.25", None)),
    ("literal-keep",          "|+\n    nginx:1.25\n\n\n",                           (4, 5, "nginx:1.25", None)),
    ("folded",                ">\n    nginx:1.25\n",                                (4, 5, "nginx:1.25", None)),
    ("folded-strip",          ">-\n    nginx:1.25\n",                               (4, 5, "nginx:1.25", None)),
    ("folded-keep",           ">+\n    nginx:1.25\n  \n\n",                         (4, 5, "nginx:1.25", None)),
    ("indentation-indicator", "|2-\n    nginx:1.25\n",                              (4, 5, "nginx:1.25", None)),
    ("indicators-swapped",    "|-2\n    nginx:1.25\n",                              (4, 5, "nginx:1.25", None)),
    ("empty-lines-after",     "|\n    nginx:1.25\n\n  \n",                          (4, 5, "nginx:1.25", None)),
    ("header-comment",        "|-  # the web server\n    nginx:1.25\n",             (4, 5, "nginx:1.25", None)),
    ("anchor-and-tag",        "&web !!str >-\n    nginx:1.25\n",                    (4, 5, "nginx:1.25", None)),
    ("no-final-line-break",   "|-\n    nginx:1.25",                                 (4, 5, "nginx:1.25", None)),
    ("pinned",                f"|-\n    nginx:1.25@{D}\n",                        (4, 5, f"nginx:1.25@{D}", None)),
    ("hash-is-content",       "|\n    nginx:1.25 # not a comment\n",                (4, 5, "nginx:1.25 # not a comment", 'invalid reference "nginx:1.25 # not a comment": has whitespace at position 11')),
    ("templated",             "|-\n    {{ .Values.image }}\n",                      (4, 5, "{{ .Values.image }}", "templated value '{{ .Values.image }}' cannot be resolved")),
    ("two-lines",             "|\n    nginx:1.25\n    redis:7\n",                   (3, 10, "|", UNPINNABLE)),
    ("folded-two-lines",      ">-\n    nginx\n    :1.25\n",                         (3, 10, ">", UNPINNABLE)),
    ("folded-paragraphs",     ">\n    nginx:1.25\n\n    more\n",                    (3, 10, ">", UNPINNABLE)),
    ("empty-line-first",      "|-\n\n    nginx:1.25\n",                             (3, 10, "|", UNPINNABLE)),
    ("trailing-spaces",       ">-\n    nginx:1.25  \n",                             (3, 10, ">", UNPINNABLE)),
    ("trailing-tab",          "|-\n    nginx:1.25\t\n",                             (3, 10, "|", UNPINNABLE)),
    ("more-indented",         "|1-\n    nginx:1.25\n",                              (3, 10, "|", UNPINNABLE)),
    ("trailing-spaced-line",  "|+\n    nginx:1.25\n     \n",                        (3, 10, "|", UNPINNABLE)),
]
# fmt: on


def _pod(value: str, newline: str = "\n") -> str:
    return ("kind: Pod\nspec:\n  image: " + value).replace("\n", newline)


def _image(text: str) -> ScalarNode:
    (document,) = compose(text)
    spec = mapping_get(document, "spec")
    assert isinstance(spec, MappingNode)
    image = mapping_get(spec, "image")
    assert isinstance(image, ScalarNode)
    return image


def _found(text: str) -> Found:
    (found,) = kubernetes.find("pod.yaml", text).found
    assert text[found.span.start : found.span.end] == found.value
    return found


@pytest.mark.parametrize("newline", NEWLINES, ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize(("value", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_find(value: str, expected: tuple[int, int, str, str | None], newline: str) -> None:
    found = _found(_pod(value, newline))
    assert (found.line, found.column, found.value, found.problem) == expected
    assert found.reference == (parse(found.value) if found.problem is None else None)


def _pin_twice(text: str) -> str:
    """Pin to D; the pinned file must read back to the pinned value, and pinning it again must change nothing."""
    found = _found(text)
    assert found.reference is not None
    pinned = apply(text, [pin_edit(found, D)])
    again = _found(pinned)
    assert (again.line, again.column, again.value) == (found.line, found.column, found.value.partition("@")[0] + "@" + D)
    assert apply(pinned, [pin_edit(again, D)]) == pinned
    return pinned


@pytest.mark.parametrize("newline", NEWLINES, ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("value", [case[1] for case in CASES if case[2][3] is None], ids=[case[0] for case in CASES if case[2][3] is None])
def test_pinned_block_reads_back_as_the_pinned_value(value: str, newline: str) -> None:
    text = _pod(value, newline)
    before = _image(text)
    after = _image(_pin_twice(text))
    line = str(before.value).rstrip("\n")
    assert after.value == f"{line.partition('@')[0]}@{D}" + str(before.value)[len(line):]  # the line breaks chomping kept
    assert after.style == before.style


def test_embedded_runtime_env_block_scalar_is_pinned_inside_it() -> None:
    text = "kind: RayJob\nspec:\n  runtimeEnvYAML: |\n    image_uri: >-\n      rayproject/ray:2.52.0\n    pip: [torch]\n"
    found = _found(text)
    assert (found.line, found.column, found.value) == (5, 7, "rayproject/ray:2.52.0")
    pinned = _pin_twice(text)
    assert pinned == text.replace("ray:2.52.0", f"ray:2.52.0@{D}")


# Generated blocks: every header, indentation, trailing lines and line break, pinned and read back.
@st.composite
def blocks(draw: st.DrawFn) -> str:
    indicator = draw(st.sampled_from([None, 1, 2, 3]))  # content indentation past the parent's two columns
    header = draw(st.sampled_from("|>")) + draw(st.sampled_from(["", "-", "+"])) + ("" if indicator is None else str(indicator))
    comment = draw(st.sampled_from(["", "  # c"]))
    trailing = draw(st.sampled_from(["", "\n", "\n\n", "  \n", "\n \n"]))
    after = draw(st.sampled_from(["", "next: 1\n"]))
    return f"{header}{comment}\n{' ' * (2 + (indicator or 2))}nginx:1.25\n{trailing}{after}"


@settings(max_examples=150, deadline=None)
@given(value=blocks(), newline=st.sampled_from(NEWLINES))
def test_generated_blocks_pin_and_read_back(value: str, newline: str) -> None:
    text = _pod(value, newline)
    before = _image(text)
    pinned = _image(_pin_twice(text))
    assert pinned.value == str(before.value).replace("nginx:1.25", f"nginx:1.25@{D}")
