"""Every `uses:` of GitHub workflows and composite actions: found with its exact span and comment, and pinned to a
commit changing only the ref and the version comment.

The real files are those of tests/testdata/corpus/github, each read under the path it has in its repository
(SOURCES.md): that path is what makes it a workflow or an action. Goldens: tests/testdata/pin/workflow/
`<corpus name>.actions.golden.<ext>` is the corpus file with every remote use pinned as `_made_up` says.
"""
from __future__ import annotations

import bisect
import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.scan.paths import scan_paths
from pinguard.sources import kinds
from pinguard.sources.base import DOCKER, LOCAL, REMOTE, ActionUse, Unreadable
from pinguard.uses import parse_uses, read_version
from pinguard.write.edits import Edit, action_pin_edits, apply
from tests.conftest import CORPUS
from tests.sources.untouched import outside

GITHUB = CORPUS / "github"
GOLDEN = Path(__file__).parent.parent / "testdata" / "pin" / "workflow"
WORKFLOW = ".github/workflows/ci.yml"
# A line that holds a `uses:` key: in a block mapping, or a sequence entry's first key.
USES_LINE = re.compile(r"^[ \t]*(?:-[ \t]+)?uses[ \t]*:", re.MULTILINE)
_ROW = re.compile(r"^\| github/(?P<name>[^ |]+) \| [^|]+ \| (?P<path>[^ |]+) \|", re.MULTILINE)


def _origins() -> dict[str, str]:
    """Corpus name -> its path in the repository it was taken from."""
    rows = _ROW.finditer((CORPUS / "SOURCES.md").read_text(encoding="utf-8"))
    return {row["name"]: row["path"] for row in rows}


ORIGINS = _origins()
REAL = sorted(path.name for path in GITHUB.iterdir())


def _read(name: str) -> tuple[str, str]:
    return ORIGINS[name], (GITHUB / name).read_text(encoding="utf-8")


def _uses(text: str, path: str = WORKFLOW) -> tuple[ActionUse, ...]:
    return kinds.find(path, text, kinds.WORKFLOW).actions


def _made_up(use: ActionUse) -> tuple[str, str]:
    """A commit and a frozen version for a use: `v4` -> `v4.1`, `v7.0.1` -> `v7.0.1.1`; a branch stays itself."""
    assert use.action is not None
    written = use.version or use.action.ref
    version = f"{written}.1" if re.search(r"[0-9]", written) else written
    return hashlib.sha1(f"{use.action.repository}@{version}".encode()).hexdigest(), version


def _pinnable(uses: tuple[ActionUse, ...]) -> list[ActionUse]:
    return [use for use in uses if use.kind == REMOTE and use.problem is None]


def _pin_all(text: str, uses: tuple[ActionUse, ...]) -> tuple[str, list[Edit]]:
    edits = [edit for use in _pinnable(uses) for edit in action_pin_edits(use, *_made_up(use))]
    return apply(text, edits), edits


class _Positions:
    """1-based line and column of offsets into a text, worked out here from a table of line starts."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [match.end() for match in re.finditer("\n", text)]

    def __call__(self, index: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, index) - 1
        return row + 1, index - self.starts[row] + 1


def check_uses(text: str, uses: tuple[ActionUse, ...]) -> None:
    """Each use where it says, its value its span's text, its comment the rest of its line, its fields agreeing."""
    position = _Positions(text)
    assert [use.span.start for use in uses] == sorted({use.span.start for use in uses})
    for use in uses:
        assert text[use.span.start:use.span.end] == use.value
        assert (use.line, use.column) == position(use.span.start)
        assert use.kind == (LOCAL if use.value.startswith("./") else DOCKER if use.value.startswith("docker://")
                            else REMOTE)
        assert (use.action is not None) == (use.kind == REMOTE and use.problem is None)
        if use.action is not None:
            assert parse_uses(use.value) == use.action
        if use.comment is None:
            assert (use.comment_text, use.version) == (None, None)
            continue
        assert use.comment_text == text[use.comment.start:use.comment.end]
        assert use.comment_text.startswith("#") and (use.comment.line, use.comment.column) == \
            position(use.comment.start)
        assert text[use.comment.end:use.comment.end + 1] in ("", "\n", "\r")
        assert text[use.span.end:use.comment.start].strip(" \t\"'") == ""
        note = read_version(use.comment_text)
        assert use.version == (None if note is None else note.ref)


@pytest.mark.parametrize("name", REAL)
def test_every_uses_of_a_real_file_is_found_exactly(name: str) -> None:
    path, text = _read(name)
    uses = _uses(text, path)
    check_uses(text, uses)
    written = [_Positions(text)(match.start())[0] for match in USES_LINE.finditer(text)]
    assert [use.line for use in uses] == written


def test_the_real_files_hold_every_form() -> None:
    """What the tests above read: quoted and plain, pinned and not, local, docker, reusable, composite."""
    every = [use for name in REAL for use in _uses(*reversed(_read(name)))]
    assert {use.kind for use in every} == {REMOTE, LOCAL, DOCKER}
    remote = [use for use in every if use.action is not None]
    assert any(use.action.pinned and use.version for use in remote if use.action)
    assert any(use.action.path.startswith(".github/workflows/") for use in remote if use.action)
    assert any(use.action.path == "restore" for use in remote if use.action)
    assert any(use.path == ".github/actions/setup-php-project/action.yml" for use in remote)
    assert [use.problem for use in every if use.problem] == []
    assert len(every) == 165


def test_versions_of_real_comments() -> None:
    path, text = _read("postgres-nio-test.yml")
    pinned = [(use.line, use.value, use.version) for use in _uses(text, path) if use.comment]
    assert pinned == [
        (34, "vapor/swift-codecov-action@2f478f2fd22e06ca363967d0fb6c6593a8548cee", "v0.3.5"),
        (126, "maxim-lobanov/setup-xcode@ed7a3b1fda3918c0306d1b724322adc0b8cc0a90", "v1.7.0"),
        (141, "vapor/swift-codecov-action@2f478f2fd22e06ca363967d0fb6c6593a8548cee", "v0.3.5"),
    ]


def _allowed(use: ActionUse, edit: Edit) -> bool:
    """Whether an edit of a use touches only its ref, its comment, or writes a comment where one goes."""
    assert use.action is not None
    if (edit.start, edit.end) == (use.span.end - len(use.action.ref), use.span.end):
        return True
    if use.comment is not None:
        return use.comment.start <= edit.start <= edit.end <= use.comment.end
    return edit.start == edit.end == use.comment_at


@pytest.mark.parametrize("name", REAL)
def test_pinning_a_real_file_changes_only_refs_and_comments(name: str) -> None:
    path, text = _read(name)
    uses = _uses(text, path)
    pinned, edits = _pin_all(text, uses)
    for use in _pinnable(uses):
        assert all(_allowed(use, edit) for edit in action_pin_edits(use, *_made_up(use)))
    kept_old, kept_new = outside(text, pinned, edits)
    assert kept_old == kept_new
    assert pinned.count("\n") == text.count("\n")

    again = _uses(pinned, path)
    check_uses(pinned, again)
    assert [use.kind for use in again] == [use.kind for use in uses]
    expected = {use.line: _made_up(use) for use in _pinnable(uses)}
    assert {use.line: (use.action.ref, use.version) for use in again if use.action} == expected
    assert [edit for use in _pinnable(again) for edit in action_pin_edits(use, *expected[use.line])] == []
    # The images read as before: a pin of actions leaves them where they were.
    before = kinds.find(path, text, kinds.WORKFLOW).found
    after = kinds.find(path, pinned, kinds.WORKFLOW).found
    assert [(f.line, f.value) for f in after] == [(f.line, f.value) for f in before]


GOLDENS = sorted(GOLDEN.glob("*.actions.golden.*"))


def test_goldens_are_there() -> None:
    assert {path.name for path in GOLDENS} == {
        "dbal-static-analysis-2021.actions.golden.yml", "laravel-setup-php-project-action.actions.golden.yml",
        "postgres-nio-test.actions.golden.yml", "valkey-ci.actions.golden.yml"}


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda path: path.name)
def test_pinning_matches_its_golden(golden: Path) -> None:
    name = golden.name.replace(".actions.golden", "")
    path, text = _read(name)
    assert _pin_all(text, _uses(text, path))[0] == golden.read_text(encoding="utf-8")


# fmt: off
WEIRD: list[tuple[str, str, str | None, str | None]] = [
    # value written after `uses: `      kind     action as read              problem, in part
    ("actions/checkout",                REMOTE,  None,                       "no `@ref`"),
    ("../x",                            REMOTE,  None,                       "no `@ref`"),
    ("a/b@ref with space",              REMOTE,  None,                       "'ref with space' is no git ref"),
    ("${{ matrix.action }}",            REMOTE,  None,                       "is an expression"),
    ("'a/b@${{ inputs.ref }}'",         REMOTE,  None,                       "is an expression"),
    ("docker://alpine:3",               DOCKER,  None,                       None),
    ("./.github/actions/x",             LOCAL,   None,                       None),
    ("'./.github/actions/x'",           LOCAL,   None,                       None),
    ("a/b@v1",                          REMOTE,  "a/b@v1",                   None),
    ("Owner/Repo/path/to@v1",           REMOTE,  "Owner/Repo/path/to@v1",    None),
    ('"a/b@v1"',                        REMOTE,  "a/b@v1",                   None),
    ("!!str a/b@v1",                    REMOTE,  "a/b@v1",                   None),
    ('"a\\x2fb@v1"',                    REMOTE,  None,                       "written with escapes"),
    ("'it''s/b@v1'",                    REMOTE,  None,                       "written with escapes"),
    ("",                                REMOTE,  None,                       "names no action"),
    ("~",                               REMOTE,  None,                       "names no action"),
    ("[a/b@v1]",                        REMOTE,  None,                       "no string"),
]
# fmt: on


@pytest.mark.parametrize(("written", "kind", "action", "problem"), WEIRD, ids=[row[0] or "empty" for row in WEIRD])
def test_weird_values(written: str, kind: str, action: str | None, problem: str | None) -> None:
    text = f"on: push\njobs:\n  a:\n    steps:\n      - uses: {written}\n        with: {{x: 1}}\n"
    (use,) = _uses(text)
    check_uses(text, (use,))
    assert (use.kind, None if use.action is None else str(use.action)) == (kind, action)
    assert (use.problem is None) == (problem is None)
    assert problem is None or problem in str(use.problem)


def test_block_scalar_is_found_at_its_first_character() -> None:
    text = "on: push\njobs:\n  a:\n    steps:\n      - uses: >-\n          a/b@v1\n"
    (use,) = _uses(text)
    assert (use.line, use.column, use.value, use.action) == (5, 15, ">", None)
    assert "block scalar" in str(use.problem)


def test_reusable_workflow_and_composite_action() -> None:
    workflow = "on: push\njobs:\n  call:\n    uses: o/r/.github/workflows/build.yml@v2 # v2.1.0\n"
    (use,) = _uses(workflow)
    assert (str(use.action), use.action and use.action.path, use.version) == \
        ("o/r/.github/workflows/build.yml@v2", ".github/workflows/build.yml", "v2.1.0")
    action = "runs:\n  using: composite\n  steps:\n    - uses: a/b@v1\n    - uses: ./local\n"
    assert [use.value for use in _uses(action, "tools/x/action.yaml")] == ["a/b@v1", "./local"]


def test_comments_and_where_one_goes() -> None:
    text = ("on: push\njobs:\n  a:\n    steps:\n"
            "      - uses: 'a/b@v1'   # checkout the code\n"
            "      - {uses: c/d@v2, with: {x: 1}}\n"
            "      - {uses: e/f@v3}  # v3.0.0\n"
            "      - uses: g/h@v4\t \n"
            "      - uses: i/j@v5 #\n"
            "      - uses: \"k/l@v6\"")
    uses = _uses(text)
    check_uses(text, uses)
    got = [(use.comment_text, use.version, use.comment_at is not None) for use in uses]
    assert got == [("# checkout the code", None, True), (None, None, False), (None, None, False), (None, None, True),
                   ("#", None, True), (None, None, True)]
    assert uses[-1].comment_at == len(text)  # after the closing quote, at the end of a file without a line break


def test_an_alias_is_one_use_at_its_anchor() -> None:
    jobs = "".join(f"  j{n}: {{runs-on: x, steps: *steps}}\n" for n in range(2000))
    text = ("on: push\nx-steps: &steps\n  - uses: &co actions/checkout@v4 # v4.1.1\n  - uses: *co\n"
            "  - uses: actions/setup-go@v5\njobs:\n" + jobs)
    uses = _uses(text)
    assert [(use.line, use.value, use.version) for use in uses] == [
        (3, "actions/checkout@v4", "v4.1.1"), (5, "actions/setup-go@v5", None)]
    pinned, _ = _pin_all(text, uses)
    assert pinned.count("@") == text.count("@") and len(_pinnable(_uses(pinned))) == 2


def test_aliases_expanding_past_the_bound_are_refused() -> None:
    levels = ["x0: &x0 [{uses: a/b@v1}, {uses: a/b@v1}, {uses: a/b@v1}, {uses: a/b@v1}]"]
    levels += [f"x{n}: &x{n} [*x{n - 1}, *x{n - 1}, *x{n - 1}, *x{n - 1}]" for n in range(1, 12)]
    text = "on: push\n" + "\n".join(levels) + "\njobs:\n  a: {steps: *x11}\n"
    with pytest.raises(Unreadable, match="aliases or matrices repeat"):
        _uses(text)


def test_a_huge_workflow_is_read_whole() -> None:
    steps = "".join(f"      - uses: o{n % 97}/r@v{n}\n" for n in range(10_000))
    text = "on: push\njobs:\n  a:\n    steps:\n" + steps
    uses = _uses(text)
    check_uses(text, uses)
    assert len(uses) == 10_000 and uses[-1].value == "o8/r@v9999"
    flow = '{"on": "push", "jobs": {"a": {"steps": [' + ", ".join('{"uses": "a/b@v1"}' for _ in range(10_000)) + "]}}}"
    one_line = _uses(flow)
    assert len(one_line) == 10_000 and all(use.comment_at is None for use in one_line)
    with pytest.raises(PinguardError, match=r"^\.github/workflows/ci\.yml:1:51: "):
        action_pin_edits(one_line[0], "a" * 40, "v1.0.0")


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def test_a_scan_reads_workflows_and_composite_actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _git(tmp_path, "init", "-q")
    workflows, action = tmp_path / ".github" / "workflows", tmp_path / ".github" / "actions" / "setup"
    workflows.mkdir(parents=True)
    action.mkdir(parents=True)
    (workflows / "ci.yml").write_text("on: push\njobs:\n  a:\n    container: alpine:3\n    steps:\n"
                                      "      - uses: actions/checkout@v4\n      - uses: ./.github/actions/setup\n")
    (action / "action.yml").write_text("runs:\n  using: composite\n  steps:\n    - uses: actions/setup-go@v5\n")
    (tmp_path / "pod.yaml").write_text("kind: Pod\nspec:\n  containers: [{name: a, image: 'nginx:1.25'}]\n")
    monkeypatch.chdir(tmp_path)
    scan = scan_paths(["."])
    assert scan.errors == []
    assert [(use.path, use.value) for use in scan.actions] == [
        (".github/actions/setup/action.yml", "actions/setup-go@v5"),
        (".github/workflows/ci.yml", "actions/checkout@v4"),
        (".github/workflows/ci.yml", "./.github/actions/setup"),
    ]
    assert {scanned.file.path.as_posix(): len(scanned.actions) for scanned in scan.files} == {
        ".github/actions/setup/action.yml": 1, ".github/workflows/ci.yml": 2, "pod.yaml": 0}
    assert [found.value for found in scan.found] == ["alpine:3", "nginx:1.25"]
