"""Dockerfiles: a truth table of what BuildKit reads as an image, where it is written, plus properties."""

# One case per line reads as a truth table; wrapping the rows would hide that.
# ruff: noqa: E501
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pinguard.sources import dockerfile
from pinguard.sources.base import SourceError
from tests.conftest import CORPUS
from tests.sources.spans import check_spans

D = "sha256:" + "0123456789abcdef" * 4

Row = tuple[int, int, str, str | None]  # line, column, value as written, str(reference) or None

# fmt: off
CASES: list[tuple[str, str, list[Row]]] = [
    # name                        source                                                                                          found
    ("simple",                    "FROM python:3.11\n",                                                                           [(1, 6, "python:3.11", "docker.io/library/python:3.11")]),
    ("platform",                  "FROM --platform=$BUILDPLATFORM golang:1.22 AS build\n",                                        [(1, 32, "golang:1.22", "docker.io/library/golang:1.22")]),
    ("two-flags",                 "FROM --platform=linux/amd64 --foo=bar alpine\n",                                               [(1, 39, "alpine", "docker.io/library/alpine")]),
    ("stages",                    "FROM golang:1.22 AS build\nFROM build AS test\nCOPY --from=build /a /a\nCOPY --from=0 /b /b\nCOPY --from=nginx:1.25 /c /c\n", [(1, 6, "golang:1.22", "docker.io/library/golang:1.22"), (5, 13, "nginx:1.25", "docker.io/library/nginx:1.25")]),
    ("stage-case",                "FROM alpine:3 AS Builder\nFROM BUILDER\nCOPY --from=builder /a /a\n",                          [(1, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("scratch",                   "FROM scratch\nCOPY app /\n",                                                                   []),
    ("copy-from-later-stage",     "FROM alpine:3\nCOPY --from=later /a /a\nFROM busybox AS later\n",                              [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (3, 6, "busybox", "docker.io/library/busybox")]),
    ("from-later-stage",          "FROM later\nFROM alpine:3 AS later\n",                                                         [(1, 6, "later", "docker.io/library/later"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("arg",                       "ARG BASE=python:3.11\nFROM $BASE\n",                                                           [(1, 10, "python:3.11", "docker.io/library/python:3.11")]),
    ("arg-quoted",                'ARG BASE="python:3.11"\nFROM ${BASE} AS app\n',                                                [(1, 11, "python:3.11", "docker.io/library/python:3.11")]),
    ("arg-single-quoted",         "ARG BASE='python:3.11'\nFROM ${BASE}\n",                                                       [(1, 11, "python:3.11", "docker.io/library/python:3.11")]),
    ("arg-used-twice",            "ARG BASE=python:3.11\nFROM ${BASE} AS a\nFROM ${BASE} AS b\n",                                 [(1, 10, "python:3.11", "docker.io/library/python:3.11")]),
    ("arg-several",               "ARG A=1 BASE=python:3.11\nFROM $BASE\n",                                                       [(1, 14, "python:3.11", "docker.io/library/python:3.11")]),
    ("arg-no-default",            "ARG BASE\nFROM ${BASE}\n",                                                                     [(2, 6, "${BASE}", None)]),
    ("arg-undeclared",            "FROM $BASE\n",                                                                                 [(1, 6, "$BASE", None)]),
    ("arg-in-stage-not-global",   "FROM alpine:3 AS a\nARG BASE=python:3.11\nFROM ${BASE}\n",                                     [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (3, 6, "${BASE}", None)]),
    ("arg-scratch",               "ARG BASE=scratch\nFROM ${BASE}\n",                                                             []),
    ("arg-mixed",                 "ARG PY=3.11\nFROM python:${PY}-slim\n",                                                        [(2, 6, "python:${PY}-slim", None)]),
    ("arg-names-stage",           "ARG V=1\nFROM alpine:3 AS build-1\nFROM build-${V}\n",                                         [(2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("platform-arg-names-stage",  "FROM scratch AS bin-linux\nFROM scratch AS bin-darwin\nFROM bin-$TARGETOS\n",                  []),
    ("lowercase",                 "from python:3.11 as base\nfrom base\n",                                                        [(1, 6, "python:3.11", "docker.io/library/python:3.11")]),
    ("tabs",                      "\tFROM\tpython:3.11\tAS\tbase\n",                                                               [(1, 7, "python:3.11", "docker.io/library/python:3.11")]),
    ("tabs-after-flag",           "FROM --platform=linux/amd64\t\tpython:3.11\n",                                                 [(1, 30, "python:3.11", "docker.io/library/python:3.11")]),
    ("crlf",                      "FROM alpine:3 AS a\r\nRUN echo hi\r\nFROM python:3.11\r\n",                                    [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (3, 6, "python:3.11", "docker.io/library/python:3.11")]),
    ("crlf-continuation",         "FROM \\\r\n  python:3.11\r\n",                                                                  [(2, 3, "python:3.11", "docker.io/library/python:3.11")]),
    ("non-ascii-before",          '# café ☕\nLABEL description="naïve ☕ image"\nFROM python:3.11\n',                              [(3, 6, "python:3.11", "docker.io/library/python:3.11")]),
    ("non-ascii-same-line",       "FROM alpine:3\nCOPY --chown=ü:ü --from=nginx:1.25 /a /a\n",                                    [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (2, 25, "nginx:1.25", "docker.io/library/nginx:1.25")]),
    ("continuation",              "FROM \\\n  python:3.11\n",                                                                     [(2, 3, "python:3.11", "docker.io/library/python:3.11")]),
    ("continuation-comment",      "FROM \\\n# a comment\n  python:3.11 AS a\n",                                                   [(3, 3, "python:3.11", "docker.io/library/python:3.11")]),
    ("continuation-blank-line",   "FROM \\\n\n  python:3.11\n",                                                                   [(3, 3, "python:3.11", "docker.io/library/python:3.11")]),
    ("continuation-splits-value", "FROM pyth\\\non:3.11\n",                                                                       [(1, 6, "pyth\\\non:3.11", None)]),
    ("escape-backtick",           "# escape=`\nFROM `\n  python:3.11\n",                                                          [(3, 3, "python:3.11", "docker.io/library/python:3.11")]),
    ("escape-backtick-backslash", "# escape=`\nFROM mcr.microsoft.com/windows/servercore:ltsc2022\nRUN dir C:\\\nFROM alpine:3\n",  [(2, 6, "mcr.microsoft.com/windows/servercore:ltsc2022", "mcr.microsoft.com/windows/servercore:ltsc2022"), (4, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("escape-not-at-top",         "FROM alpine:3\n# escape=`\nRUN echo `\nFROM python:3.11\n",                                    [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (4, 6, "python:3.11", "docker.io/library/python:3.11")]),
    ("heredoc",                   "FROM alpine:3\nRUN <<EOF\nFROM evil:1\nEOF\nFROM python:3.11\n",                               [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (5, 6, "python:3.11", "docker.io/library/python:3.11")]),
    ("heredoc-chomp-quoted",      "FROM alpine:3\nRUN <<-'EOT' sh\n\tFROM evil:1\n\tEOT\nCOPY --from=nginx:1.25 /a /a\n",          [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (5, 13, "nginx:1.25", "docker.io/library/nginx:1.25")]),
    ("heredoc-two",               "FROM alpine:3\nCOPY <<A <<B /dst/\nFROM evil:1\nA\nFROM evil:2\nB\nFROM python:3.11\n",       [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (7, 6, "python:3.11", "docker.io/library/python:3.11")]),
    ("heredoc-in-json-form",      'FROM alpine:3\nRUN ["sh", "-c", "cat <<EOF"]\nFROM python:3.11\n',                             [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (3, 6, "python:3.11", "docker.io/library/python:3.11")]),
    ("heredoc-in-quotes",         'FROM alpine:3\nRUN echo "<<EOF"\nFROM python:3.11\n',                                          [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (3, 6, "python:3.11", "docker.io/library/python:3.11")]),
    ("heredoc-onbuild",           "FROM alpine:3\nONBUILD RUN <<EOF\nFROM evil:1\nEOF\n",                                         [(1, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("pinned",                    f"FROM python:3.11@{D}\n",                                                                      [(1, 6, f"python:3.11@{D}", f"docker.io/library/python:3.11@{D}")]),
    ("pinned-digest-only",        f"FROM python@{D}\n",                                                                           [(1, 6, f"python@{D}", f"docker.io/library/python@{D}")]),
    ("uppercase",                 "FROM Python:3\n",                                                                              [(1, 6, "Python:3", None)]),
    ("quoted",                    'FROM "python:3.11"\n',                                                                         [(1, 7, "python:3.11", "docker.io/library/python:3.11")]),
    ("partly-quoted",             'ARG TAG=3\nFROM alpine:"${TAG}"\n',                                                            [(2, 6, 'alpine:"${TAG}"', None)]),
    ("mount-from",                "FROM alpine:3\nRUN --mount=type=bind,from=golang:1.22,source=/go,target=/go true\n",          [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (2, 28, "golang:1.22", "docker.io/library/golang:1.22")]),
    ("mount-from-stage",          "FROM alpine:3 AS a\nRUN --mount=from=a,target=/x true\n",                                      [(1, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("copy-from-variable",        "FROM alpine:3\nARG SRC=nginx:1\nCOPY --from=$SRC /a /a\n",                                     [(1, 6, "alpine:3", "docker.io/library/alpine:3"), (3, 13, "$SRC", None)]),
    ("commented-out",             "# FROM commented:1\n\nFROM alpine:3\n",                                                        [(3, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("comment-ends-in-backslash", "# note \\\nFROM alpine:3\n",                                                                   [(2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax",                    "# syntax=docker/dockerfile:1.7\nFROM alpine:3\n",                                              [(1, 10, "docker/dockerfile:1.7", "docker.io/docker/dockerfile:1.7"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-no-blank",           "#syntax=docker/dockerfile:1\nFROM alpine:3\n",                                                 [(1, 9, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-blanks-around",      "#\t syntax \t=  docker/dockerfile:1 \t\nFROM alpine:3\n",                                      [(1, 15, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-key-any-case",       "# SynTax=docker/dockerfile:1\nFROM alpine:3\n",                                                [(1, 10, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-options",            "# syntax=docker/dockerfile:1 // opts\nFROM alpine:3\n",                                        [(1, 10, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-pinned",             f"# syntax=docker/dockerfile:1@{D}\nFROM alpine:3\n",                                           [(1, 10, f"docker/dockerfile:1@{D}", f"docker.io/docker/dockerfile:1@{D}"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-crlf",               "# syntax=docker/dockerfile:1\r\nFROM alpine:3\r\n",                                            [(1, 10, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-bom",                "\ufeff# syntax=docker/dockerfile:1\nFROM alpine:3\n",                                          [(1, 11, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-after-escape",       "# escape=`\n# syntax=docker/dockerfile:1\nFROM `\n  alpine:3\n",                               [(2, 10, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (4, 3, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-after-check",        "# check=skip=all\n# syntax=docker/dockerfile:1\nFROM alpine:3\n",                              [(2, 10, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (3, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-after-shebang",      "#!/usr/bin/env buildctl\n# syntax=docker/dockerfile:1\nFROM alpine:3\n",                       [(2, 10, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (3, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-c-style",            "//syntax=docker/dockerfile:1\nFROM alpine:3\n",                                                [(1, 10, "docker/dockerfile:1", "docker.io/docker/dockerfile:1"), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-c-style-after-hash", "# escape=\\\n//syntax=docker/dockerfile:1\nFROM alpine:3\n",                                   [(3, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-twice-shebang",      "#!/bin/sh\n# syntax=docker/dockerfile:1.4\n# syntax=docker/dockerfile:1.7\nFROM alpine:3\n",   [(2, 10, "docker/dockerfile:1.4", "docker.io/docker/dockerfile:1.4"), (4, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-variable",           "# syntax=${FRONTEND}\nFROM alpine:3\n",                                                        [(1, 10, "${FRONTEND}", None), (2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-empty",              "# syntax=\nFROM alpine:3\n",                                                                   [(2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-indented",           " # syntax=docker/dockerfile:1\nFROM alpine:3\n",                                               [(2, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-after-instruction",  "FROM alpine:3\n# syntax=docker/dockerfile:1\n",                                                [(1, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-after-comment",      "# a comment\n# syntax=docker/dockerfile:1\nFROM alpine:3\n",                                   [(3, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-after-empty-line",   "\n# syntax=docker/dockerfile:1\nFROM alpine:3\n",                                              [(3, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-after-other-key",    "# key=value\n# syntax=docker/dockerfile:1\nFROM alpine:3\n",                                   [(3, 6, "alpine:3", "docker.io/library/alpine:3")]),
    ("syntax-after-shebang-only", "#!/bin/sh\n# escape=`\nRUN echo `\nFROM alpine:3\n",                                           [(4, 6, "alpine:3", "docker.io/library/alpine:3")]),
]

PROBLEMS: list[tuple[str, str]] = [
    # source                                              problem
    ("ARG PY=3.11\nFROM python:${PY}-slim\n",              "uses build argument ${PY}; cannot be resolved without it"),
    ("FROM ${REG}/app:${TAG}\n",                           "uses build arguments ${REG}, ${TAG}; cannot be resolved without them"),
    ("ARG BASE\nFROM ${BASE}\n",                           "uses build argument ${BASE}, which has no default; cannot be resolved"),
    ("FROM $BASE\n",                                       "uses build argument ${BASE}, which is not declared before the first FROM; cannot be resolved"),
    ("ARG A=x\nARG BASE=${A}:1\nFROM $BASE\n",             'uses build argument ${BASE}, whose default "${A}:1" cannot be pinned in place'),
    ('ARG TAG=3\nFROM alpine:"${TAG}"\n',                  "uses build argument ${TAG}; cannot be resolved without it"),
    ('FROM alpine:"3"\n',                                  "only part of the value is quoted; quote all of it or none of it to pin it"),
    ("FROM pyth\\\non:3.11\n",                             "the value is split by a line continuation; join it to pin it"),
    ("FROM Python:3\n",                                    'invalid reference "Python:3": repository name must be lowercase: "P" at position 1'),
    ("FROM alpine\nCOPY --from=${SRC} /a /a\n",            "uses build argument ${SRC}; cannot be resolved without it"),
    ("# syntax=${FRONTEND}\n",                             "uses ${FRONTEND}, which BuildKit does not expand in parser directives; cannot be resolved"),
    ("# syntax=$A/${B}:1 // opts\n",                       "uses ${A}, ${B}, which BuildKit does not expand in parser directives; cannot be resolved"),
    ("# syntax=docker/Dockerfile:1\n",                     'invalid reference "docker/Dockerfile:1": repository name must be lowercase: "D" at position 8'),
]

# BuildKit's parser refuses these files: (source, message, line, column).
DIRECTIVE_ERRORS: list[tuple[str, str, int, int]] = [
    ("# syntax=docker/dockerfile:1\n# syntax=docker/dockerfile:1.7\nFROM alpine:3\n", "only one syntax parser directive can be used", 2, 10),
    ("# escape=`\n  # ESCAPE=\\\nFROM alpine:3\n",                              "only one escape parser directive can be used", 2, 12),
    ("# check=skip=all\n# check=error=true\nFROM alpine:3\n",                   "only one check parser directive can be used", 2, 9),
    ("# escape=x\nFROM alpine:3\n",                                             "invalid escape token 'x' does not match ` or \\", 1, 10),
]
# fmt: on


@pytest.mark.parametrize(("source", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_find(source: str, expected: list[Row]) -> None:
    found = dockerfile.find("Dockerfile", source).found
    check_spans(source, found)
    assert [(f.line, f.column, f.value, None if f.reference is None else str(f.reference)) for f in found] == expected


@pytest.mark.parametrize(("source", "problem"), PROBLEMS)
def test_problem(source: str, problem: str) -> None:
    found = dockerfile.find("Dockerfile", source).found
    assert [f.problem for f in found if f.reference is None] == [problem]


@pytest.mark.parametrize(("source", "message", "line", "column"), DIRECTIVE_ERRORS)
def test_directive_errors(source: str, message: str, line: int, column: int) -> None:
    with pytest.raises(SourceError) as caught:
        dockerfile.find("Dockerfile", source)
    assert (str(caught.value), caught.value.line, caught.value.column) == (message, line, column)


def test_unterminated_heredoc_is_a_source_error() -> None:
    with pytest.raises(SourceError, match="unterminated heredoc <<EOF") as caught:
        dockerfile.find("Dockerfile", "FROM alpine:3\n\nRUN <<EOF\necho\n")
    assert (caught.value.line, caught.value.column) == (3, 1)


FRAGMENTS = [
    "FROM ", "from ", "ARG ", "COPY ", "RUN ", "ONBUILD ", "LABEL ", "--from=", "--platform=$P ", "--mount=type=bind,from=",
    " AS ", " as ", "python:3.11", "Python", "${BASE}", "$B", "BASE=", "B=x", "-${V}", "@" + D, "scratch", "0", "context",
    '"', "'", "\\", "`", "# escape=`", "# escape=\\", "#", "<<EOF", "<<-EOF", "<< 'EOF'", "EOF", "\tEOF", "[", "]", '["a"]',
    "\t", " ", "\n", "\r\n", "\r", "é", "☕", "\ufeff", "\x0b", "\xa0", "=",
    "# syntax=", "#syntax=docker/dockerfile:1", "//syntax=", "# check=x", "#!", " // opts", "docker/dockerfile:1.7",
]


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(), st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)))
def test_any_text(text: str) -> None:
    try:
        found = dockerfile.find("Dockerfile", text).found
    except SourceError:
        return
    check_spans(text, found)


def _corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and "dockerfile" in p.name.lower())


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = path.read_text(encoding="utf-8").removeprefix("\ufeff")
    found = dockerfile.find("Dockerfile", text).found
    check_spans(text, found)
    assert capsys.readouterr() == ("", "")
