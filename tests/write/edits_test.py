"""`action_pin_edits`: a `uses:` made to read `owner/repo[/path]@<commit> # <version>`, every other byte kept."""

# One case per line reads as a table; wrapping the rows would hide that.
# ruff: noqa: E501
from __future__ import annotations

import pytest

from pinguard.errors import PinguardError
from pinguard.sources import kinds
from pinguard.sources.base import ActionUse
from pinguard.write.edits import action_pin_edits, apply

PATH = ".github/workflows/ci.yml"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
OLD = "fedcba9876543210fedcba9876543210fedcba98"


def _step(written: str) -> str:
    """A workflow whose one step is `- uses: <written>`, on line 5."""
    return f"on: push\njobs:\n  a:\n    steps:\n      - uses: {written}\n        with: {{x: 1}}\n"


def _use(text: str) -> ActionUse:
    (use,) = kinds.find(PATH, text, kinds.WORKFLOW).actions
    return use


def _pinned(text: str, version: str = "v6.0.1", commit: str = COMMIT) -> str:
    return apply(text, action_pin_edits(_use(text), commit, version))


# fmt: off
CASES: list[tuple[str, str, str, str]] = [
    # name                   written after `uses: `                                   version      pinned
    ("plain",                "actions/checkout@v6",                                   "v6.0.1",    f"actions/checkout@{COMMIT} # v6.0.1"),
    ("double-quoted",        '"actions/checkout@v6"',                                 "v6.0.1",    f'"actions/checkout@{COMMIT}" # v6.0.1'),
    ("single-quoted",        "'actions/checkout@v6'",                                 "v6.0.1",    f"'actions/checkout@{COMMIT}' # v6.0.1"),
    ("path",                 "github/codeql-action/upload-sarif@v3",                  "v3.28.1",   f"github/codeql-action/upload-sarif@{COMMIT} # v3.28.1"),
    ("anchored",             "&co actions/checkout@v6",                               "v6.0.1",    f"&co actions/checkout@{COMMIT} # v6.0.1"),
    ("tagged",               "!!str actions/checkout@v6",                             "v6.0.1",    f"!!str actions/checkout@{COMMIT} # v6.0.1"),
    ("trailing-blanks",      "actions/checkout@v6  \t",                               "v6.0.1",    f"actions/checkout@{COMMIT} # v6.0.1  \t"),
    ("pinact-comment",       f"actions/checkout@{OLD} # v5.0.0",                      "v6.0.1",    f"actions/checkout@{COMMIT} # v6.0.1"),
    ("comment-kept",         f"actions/checkout@{OLD}   #v5.0.0 pinned by pinact",     "v6.0.1",    f"actions/checkout@{COMMIT}   #v6.0.1 pinned by pinact"),
    ("renovate-tag",         f"actions/checkout@{OLD} # tag=v5.0.0",                  "v6.0.1",    f"actions/checkout@{COMMIT} # tag=v6.0.1"),
    ("ratchet",              f"actions/checkout@{OLD} # ratchet:actions/checkout@v5", "v6.0.1",    f"actions/checkout@{COMMIT} # ratchet:actions/checkout@v6.0.1"),
    ("pin-github-action",    f"actions/checkout@{OLD} # pin@v5",                      "v6.0.1",    f"actions/checkout@{COMMIT} # pin@v6.0.1"),
    ("free-text",            "'actions/checkout@v6'  # checkout the code",            "v6.0.1",    f"'actions/checkout@{COMMIT}'  # v6.0.1 # checkout the code"),
    ("empty-comment",        "actions/checkout@v6 #",                                 "v6.0.1",    f"actions/checkout@{COMMIT} # v6.0.1 #"),
    ("version-only",         f"actions/checkout@{COMMIT} # v5.0.0",                   "v6.0.1",    f"actions/checkout@{COMMIT} # v6.0.1"),
    ("commit-only",          f"actions/checkout@{OLD} # v6.0.1",                      "v6.0.1",    f"actions/checkout@{COMMIT} # v6.0.1"),
    # A version without a digit would read as free text: written `tag=`, as Renovate writes it.
    ("branch",               "o/r/.github/workflows/ci.yml@main",                     "main",      f"o/r/.github/workflows/ci.yml@{COMMIT} # tag=main"),
    ("branch-over-version",  f"o/r@{OLD} # v1.0.0",                                   "main",      f"o/r@{COMMIT} # tag=main"),
    ("branch-after-tag",     f"o/r@{OLD} # tag=v1.0.0",                               "main",      f"o/r@{COMMIT} # tag=main"),
    ("branch-in-ratchet",    f"o/r@{OLD} # ratchet:o/r@v1",                           "main",      f"o/r@{COMMIT} # ratchet:o/r@main"),
]
# fmt: on


@pytest.mark.parametrize(("written", "version", "pinned"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_pin(written: str, version: str, pinned: str) -> None:
    text = _step(written)
    assert _pinned(text, version) == _step(pinned)
    again = _use(_pinned(text, version))
    assert (again.action and again.action.ref, again.version) == (COMMIT, version)
    assert action_pin_edits(again, COMMIT, version) == []  # a second pin changes nothing


@pytest.mark.parametrize("break_", ["\n", "\r\n"])
def test_line_breaks_are_kept(break_: str) -> None:
    text = _step("actions/checkout@v6 # v6\t").replace("\n", break_)
    assert _pinned(text) == _step(f"actions/checkout@{COMMIT} # v6.0.1\t").replace("\n", break_)


def test_the_last_line_of_a_file_without_a_line_break() -> None:
    text = 'on: push\njobs:\n  a:\n    uses: "o/r/.github/workflows/x.yml@v1"'
    assert _pinned(text, "v1.2.0") == f'on: push\njobs:\n  a:\n    uses: "o/r/.github/workflows/x.yml@{COMMIT}" # v1.2.0'


def test_a_sha256_commit() -> None:
    commit = "ab" * 32
    assert _pinned(_step("a/b@v1"), "v1.0.0", commit) == _step(f"a/b@{commit} # v1.0.0")


def test_a_flow_mapping_gets_no_comment_mid_line() -> None:
    text = "on: push\njobs:\n  a:\n    steps:\n      - {uses: 'a/b@v1', with: {x: 1}}\n"
    with pytest.raises(PinguardError) as raised:
        action_pin_edits(_use(text), COMMIT, "v1.0.0")
    assert str(raised.value) == (f"{PATH}:5:17: `# v1.0.0` cannot be written after 'a/b@v1': the line goes on after it, "
                                 "and a comment there would end it; write `uses:` on a line of its own")


def test_a_flow_mapping_ending_its_line_takes_the_comment() -> None:
    text = "on: push\njobs:\n  a:\n    steps: [\n      {with: {x: 1},\n       uses: a/b@v1}]\n"
    with pytest.raises(PinguardError, match=":6:14: "):
        action_pin_edits(_use(text), COMMIT, "v1.0.0")
    ends = "on: push\njobs:\n  a:\n    steps: [{\n      uses: a/b@v1\n    }]\n"
    assert _pinned(ends, "v1.0.0") == ends.replace("a/b@v1", f"a/b@{COMMIT} # v1.0.0")
    assert _use(_pinned(ends, "v1.0.0")).version == "v1.0.0"


@pytest.mark.parametrize(("commit", "version", "message"), [
    (COMMIT.upper(), "v1", "is no commit"),
    (COMMIT[:-1], "v1", "is no commit"),
    ("main", "v1", "is no commit"),
    (COMMIT, "", "is no tag"),
    (COMMIT, "v 1", "is no tag"),
    (COMMIT, "v1..2", "is no tag"),
    (COMMIT, "v1\n# x", "is no tag"),
    (COMMIT, OLD, "is no tag"),
])
def test_commit_and_version_are_checked_first(commit: str, version: str, message: str) -> None:
    with pytest.raises(PinguardError, match=message):
        action_pin_edits(_use(_step("a/b@v1")), commit, version)


@pytest.mark.parametrize(("written", "message"), [
    ("./.github/actions/x", "'./.github/actions/x' names no action of another repository, but a local one"),
    ("docker://alpine:3", "'docker://alpine:3' names no action of another repository, but a docker one"),
    ("actions/checkout", "'actions/checkout': no `@ref`"),
    ("${{ inputs.action }}", "is an expression"),
    ('"a\\x2fb@v1"', "written with escapes"),
])
def test_what_names_no_action_is_refused(written: str, message: str) -> None:
    with pytest.raises(PinguardError, match=f"^{PATH}:5:15: no action to pin: ") as raised:
        action_pin_edits(_use(_step(written)), COMMIT, "v1.0.0")
    assert message in str(raised.value)
