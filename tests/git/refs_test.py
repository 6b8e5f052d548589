"""`git ls-remote` text read into branches and tags, hostile text refused line by line, and what the refs name."""
from __future__ import annotations

import os
import subprocess

import pytest

from pinguard.git.refs import RemoteRefs, parse_ls_remote, valid_ref_name

A, B, C = "a" * 40, "b" * 40, "c" * 40
LISTING = f"""\
{A}\tHEAD
{A}\trefs/heads/main
{B}\trefs/heads/v1
{C}\trefs/pull/7/head
{B}\trefs/tags/v1
{"d" * 40}\trefs/tags/v2
{A}\trefs/tags/v2^{{}}
{A}\trefs/tags/v2.0.0
"""


def test_a_listing_is_read_into_branches_and_tags_annotated_ones_peeled() -> None:
    refs = parse_ls_remote(LISTING, "acme/tool")
    assert refs.repository == "acme/tool"
    assert refs.branches == {"main": A, "v1": B}
    assert refs.tags == {"v1": B, "v2": A, "v2.0.0": A}  # v2's tag object, peeled to its commit


def test_a_ref_is_looked_up_a_tag_before_a_branch_as_git_does() -> None:
    refs = parse_ls_remote(LISTING, "acme/tool")
    assert refs.lookup("v2") == A and refs.lookup("refs/tags/v2") == A
    assert refs.lookup("main") == A and refs.lookup("refs/heads/main") == A
    assert refs.lookup("refs/heads/v2") is None and refs.lookup("refs/tags/main") is None
    assert refs.lookup("pull/7/head") is None and refs.lookup("HEAD") is None and refs.lookup(C) is None
    assert refs.is_tag("v1") and not refs.is_branch("v1")  # both exist: the short name is the tag
    assert refs.is_branch("refs/heads/v1") and not refs.is_tag("refs/heads/v1")
    assert refs.is_branch("main") and not refs.is_tag("main") and not refs.is_tag("refs/tags/main")
    assert not refs.is_tag("nothing") and not refs.is_branch("nothing")


def test_what_names_a_commit() -> None:
    refs = parse_ls_remote(LISTING, "acme/tool")
    assert refs.tags_at(A) == ("v2", "v2.0.0") and refs.tags_at(B) == ("v1",) and refs.tags_at(C) == ()
    assert refs.names(A) and refs.names(B)
    assert not refs.names(C)  # only a pull request's ref points there
    assert not refs.names("d" * 40)  # the tag object, not a commit any ref names
    only_branch = RemoteRefs("acme/tool", {"main": C}, {})
    assert only_branch.names(C) and only_branch.tags_at(C) == ()


def test_an_unpeeled_tag_of_a_tree_stays_as_listed_and_sha256_is_read() -> None:
    tree, commit = "e" * 64, "f" * 64
    refs = parse_ls_remote(f"{commit}\trefs/heads/main\n{tree}\trefs/tags/tree-tag\n", "acme/tool")
    assert refs.tags == {"tree-tag": tree} and refs.branches == {"main": commit}
    assert parse_ls_remote("", "acme/tool") == RemoteRefs("acme/tool", {}, {})


@pytest.mark.parametrize(("text", "why"), [
    (f"{A} refs/heads/main", "not `<object name><tab><ref name>`"),
    (f"{A}\trefs/heads/main\n\n{B}\trefs/tags/v1", "line 2: not `<object name>"),
    (f"{A.upper()}\trefs/heads/main", "not 40 or 64 lowercase hex"),
    (f"{A[:-1]}\trefs/heads/main", "not 40 or 64 lowercase hex"),
    (f"{A}\trefs/heads/main\n{'e' * 64}\trefs/tags/v1", "two lengths"),
    (f"{A}\trefs/tags/v1^{{}}", "does not follow its tag"),
    (f"{A}\trefs/heads/main\n{B}\trefs/heads/main^{{}}", "does not follow its tag"),
    (f"{A}\trefs/tags/v1\n{B}\trefs/tags/v2\n{C}\trefs/tags/v1^{{}}", "line 3: a peeled line"),
    (f"{A}\trefs/tags/v1\n{B}\trefs/tags/v1", "listed twice"),
    (f"{A}\trefs/tags/v1\r", "not a ref name"),
])
def test_a_malformed_line_is_refused_naming_it(text: str, why: str) -> None:
    with pytest.raises(ValueError, match="ls-remote line") as raised:
        parse_ls_remote(text, "acme/tool")
    assert why in str(raised.value)


@pytest.mark.parametrize("name", [
    "refs/tags/\x1b]0;owned\x07", "refs/tags/a..b", "refs/tags/v1.lock", "refs/tags/.hidden", "refs/tags/a b",
    "refs/tags/a~1", "refs/tags/a:b", "refs/tags/a?", "refs/tags/a*", "refs/tags/a[", "refs/tags/a\\b",
    "refs/tags/a@{1}", "refs/tags//a", "refs/tags/a/", "refs/tags/a.", "main", "refs",
])
def test_a_hostile_ref_name_is_refused_and_quoted_harmlessly(name: str) -> None:
    with pytest.raises(ValueError, match="not a ref name git accepts") as raised:
        parse_ls_remote(f"{A}\t{name}\n", "acme/tool")
    assert "\x1b" not in str(raised.value) and "\x07" not in str(raised.value)


def test_a_quoted_line_is_cut() -> None:
    with pytest.raises(ValueError) as raised:
        parse_ls_remote(f"{A}\trefs/tags/{'x' * 100_000}~\n", "acme/tool")
    assert len(str(raised.value)) < 1000


@pytest.mark.parametrize("name", [
    "refs/heads/main", "refs/tags/v1.2.3", "refs/tags/release/2024-01", "refs/tags/@", "refs/tags/a@b",
    "refs/tags/é", "refs/tags/a.b", "refs/tags/a..b", "refs/tags/v1.lock", "refs/tags/.x", "refs/tags/x.",
    "refs/tags/a b", "refs/tags/a//b", "refs/tags/a@{b", "refs/tags/a^", "refs/tags/a\x7f", "refs/tags/",
    "refs/tags/a/.b", "refs/tags/a/b.lock/c", "refs/heads/-x", "refs/tags/\u2028x", "refs/tags/\u202ecod.exe",
])
def test_ref_names_are_judged_as_git_check_ref_format_judges_them(name: str) -> None:
    environment = {"PATH": os.environ.get("PATH", os.defpath)}
    git = subprocess.run(["git", "check-ref-format", name], env=environment, capture_output=True, check=False)
    assert valid_ref_name(name) == (git.returncode == 0)


def test_a_large_listing_is_read_whole() -> None:
    lines = [f"{index:040x}\trefs/tags/v{index}" for index in range(1, 100_001)]
    refs = parse_ls_remote("\n".join(lines) + "\n", "acme/tool")
    assert len(refs.tags) == 100_000 and refs.lookup("v99999") == f"{99999:040x}"
