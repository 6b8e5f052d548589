"""What a `uses:` names, by GitHub's grammar, and the version a pinned one's comment names."""
from __future__ import annotations

import pytest

from pinguard.errors import InvalidReference
from pinguard.uses import ActionRef, is_docker, is_local, is_ref, parse_uses, read_version, version_word

SHA = "de0fac2e4500dabe0009e67214ff5f5447ce83dd"


@pytest.mark.parametrize(("value", "expected"), [
    ("actions/checkout@v6", ActionRef("actions", "checkout", "", "v6")),
    ("github/codeql-action/upload-sarif@v4", ActionRef("github", "codeql-action", "upload-sarif", "v4")),
    ("acme/deploy/.github/workflows/release.yml@main",
     ActionRef("acme", "deploy", ".github/workflows/release.yml", "main")),
    ("a/b@release/v2", ActionRef("a", "b", "", "release/v2")),  # a ref may hold slashes; the last `@` splits
])
def test_a_value_names_owner_repository_path_and_ref(value: str, expected: ActionRef) -> None:
    assert parse_uses(value) == expected
    assert str(parse_uses(value)) == value


def test_the_repository_is_compared_without_case_and_only_a_commit_is_pinned() -> None:
    action = parse_uses("Actions/Checkout@v6")
    assert (action.repository, action.pinned) == ("actions/checkout", False)
    assert parse_uses(f"actions/checkout@{SHA}").pinned
    assert not parse_uses(f"actions/checkout@{SHA.upper()}").pinned  # GitHub's commits are written lower-case
    assert parse_uses(f"actions/checkout@{'a' * 64}").pinned  # a SHA-256 repository's


@pytest.mark.parametrize(("value", "message"), [
    ("actions/checkout", "no `@ref`"),
    ("checkout@v6", "not owner/repo"),
    ("-acme/deploy@v1", "is no GitHub owner name"),
    ("acme/../x@v1", "is no GitHub repository name"),
    ("acme/deploy/../x@v1", "is not a folder of the repository"),
    ("acme/deploy@v1 with space", "is no git ref"),
    ("acme/deploy@v1..2", "is no git ref"),
    ("acme/deploy@", "is no git ref"),
    ("acme/deploy@x.lock", "is no git ref"),
])
def test_a_value_that_names_no_action_is_refused_saying_why(value: str, message: str) -> None:
    with pytest.raises(InvalidReference, match=message):
        parse_uses(value)


def test_local_and_docker_values_are_told_apart() -> None:
    assert is_local("./.github/actions/build") and not is_local("../x")
    assert is_docker("docker://alpine:3.20") and not is_docker("actions/checkout@v6")


@pytest.mark.parametrize(("ref", "valid"), [
    ("v6.0.1", True), ("release/v2", True), ("-x", False), ("a..b", False), ("a@{1}", False), ("a b", False),
    ("x" * 256, False), ("a/", False), ("a.lock", False),
])
def test_refs_are_what_git_accepts(ref: str, valid: bool) -> None:
    assert is_ref(ref) is valid


@pytest.mark.parametrize(("comment", "ref"), [
    ("# v6.0.1", "v6.0.1"),
    ("#v4", "v4"),
    ("# tag=main", "main"),
    ("# ratchet:actions/checkout@v6", "v6"),
    ("# pin@v6 the pin", "v6"),
    ("# checkout the code", None),  # free text: no digit, no marker
    (f"# {SHA}", None),  # a commit is no version anybody reads
    ("#", None),
])
def test_the_version_is_the_first_word_as_pinning_tools_write_it(comment: str, ref: str | None) -> None:
    note = read_version(comment)
    assert (note.ref if note else None) == ref
    if note is not None:
        assert comment[note.start:note.end] == ref


@pytest.mark.parametrize(("version", "word"), [("v6.0.1", "v6.0.1"), ("main", "tag=main")])
def test_a_version_is_written_so_that_it_reads_back(version: str, word: str) -> None:
    assert version_word(version) == word
    note = read_version(f"# {word}")
    assert note is not None and note.ref == version
