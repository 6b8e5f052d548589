"""Suppressions: only a real comment suppresses, whatever string form holds the marker; read once a file."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pinguard.lock import lockfile
from pinguard.lock.lockfile import dumps
from pinguard.policy import lint, suppress
from pinguard.policy.model import Policy
from pinguard.policy.rules.common import Context
from pinguard.scan.paths import scan_paths
from pinguard.sources import dockerfile, templates, yamlnodes
from testing.lockdata import lock_for
from tests.counting import CountingPattern, CountingText
from tests.policy.helpers import check_rule

TAIL = "kind: Pod\nspec: {containers: [{name: b, image: nginx@sha256:" + "a" * 64 + "}]}\n"  # a manifest, no finding
IGNORE = "pinguard: ignore[duplicate-key]"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("text", "line"), [
    # the marker in a string of every form YAML has: the key `a` is still reported where it is shadowed
    (f"a: x {IGNORE.replace(' ', '')}\na: y\n", 1),  # plain
    (f"a: '{IGNORE}'\na: y\n", 1),  # single-quoted
    (f'a: "{IGNORE}"\na: y\n', 1),  # double-quoted
    (f'a: {{"{IGNORE}": 1}}\na: y\n', 1),  # a key of a flow mapping
    (f"a: [x, '{IGNORE}']\na: y\n", 1),  # an item of a flow sequence
    (f"x: |\n  # {IGNORE}\na: 1\na: 2\n", 3),  # a literal block scalar's line, alone above
    (f"x: >-\n  # {IGNORE}\na: 1\na: 2\n", 3),  # a folded one
    (f'x: "one\n  # {IGNORE}"\na: 1\na: 2\n', 3),  # a double-quoted scalar's second line
    (f"x: 'one\n  # {IGNORE}'\na: 1\na: 2\n", 3),  # a single-quoted one
    (f"b: 1  # {IGNORE}\na: 1\na: 2\n", 2),  # a comment after a value suppresses nothing below it
])
def test_a_marker_in_a_yaml_string_suppresses_nothing(folder: Path, text: str, line: int) -> None:
    found = check_rule(folder, "duplicate-key", {"conf.yaml": text + TAIL})
    assert [f.line for f in found] == [line]


@pytest.mark.parametrize("text", [
    f"a: x  # {IGNORE}\na: y\n",
    f"# {IGNORE} read by the last one\na: x\na: y\n",  # alone on the line above
    f'a: "x # y"  # {IGNORE}\na: y\n',  # after a quoted `#`
    f"a: {{b: '#'}}  # {IGNORE}\na: y\n",  # after a flow mapping
    f"a: [1,  # {IGNORE}\n  2]\na: y\n",  # inside a flow sequence
    f"a: |  # {IGNORE}\n  x\na: y\n",  # in a block scalar's header
    f"x: |\n  text\n\n# {IGNORE}\na: 1\na: 2\n",  # after a block scalar, less indented
    f"# {IGNORE.replace('duplicate-key', 'unpinned, duplicate-key')}\na: x\na: y\n",  # one of several rules
])
def test_a_yaml_comment_suppresses(folder: Path, text: str) -> None:
    assert check_rule(folder, "duplicate-key", {"conf.yaml": text + TAIL}) == []


@pytest.mark.parametrize(("name", "text", "lines"), [
    ("pod.yaml", "kind: Pod\nspec:\n  containers:\n  - {name: 'pinguard: ignore[unpinned]', image: nginx:1.25}\n",
     [4]),
    ("pod.yaml", "kind: Pod\nspec:\n  containers:\n  - {name: a, image: nginx:1.25}"
                 "  # pinguard: ignore[unpinned]\n", []),
    # JSON has no comments: a string holds the marker, and a YAML comment is no JSON
    ("pod.json", '{"kind": "Pod", "spec": {"containers": [{"name": "# pinguard: ignore[unpinned]", '
                 '"image": "nginx:1.25"}]}}\n', [1]),
    ("pod.json", '{"kind": "Pod", "spec": {"containers": [{"name": "a", "image": "nginx:1.25"}]}}'
                 "  # pinguard: ignore[unpinned]\n", [1]),
    ("Dockerfile", "# pinguard: ignore[unpinned] built from our own base\nFROM nginx:1.25\n", []),
    ("Dockerfile", "FROM alpine@sha256:" + "a" * 64 + " AS a\n  # pinguard: ignore[unpinned]\nFROM nginx:1.25\n", []),
    ("Dockerfile", "FROM nginx:1.25 # pinguard: ignore[unpinned]\n", [1]),  # a Dockerfile comment has its own line
    ("Dockerfile", "RUN echo '# pinguard: ignore[unpinned]' \\\n  && true\nFROM nginx:1.25\n", [3]),
])
def test_markers_by_kind(folder: Path, name: str, text: str, lines: list[int]) -> None:
    assert [f.line for f in check_rule(folder, "unpinned", {name: text})] == lines


@pytest.mark.parametrize(("text", "lines"), [
    ("image: {{ .Values.image }}  # pinguard: ignore[templated] set by the chart\n", []),
    ("{{/* pinguard: ignore[templated] set by the chart */}}\nimage: {{ .Values.image }}\n", []),
    ("{{- /*\n  pinguard: ignore[templated] set by the chart\n*/}}\nimage: {{ .Values.image }}\n", []),
    ('image: "{{ .Values.image }} # pinguard: ignore[templated]"\n', [1]),
    ("image: {{ .Values.image | default \"# pinguard: ignore[templated]\" }}\n", [1]),
])
def test_template_comments(folder: Path, text: str, lines: list[int]) -> None:
    assert [f.line for f in check_rule(folder, "templated", {"deploy.yaml.tmpl": text})] == lines


def test_a_yaml_file_that_is_a_template_has_its_comments_read_line_by_line(folder: Path) -> None:
    text = ("kind: Pod\nspec:\n  containers:\n{{- range .Values.apps }}\n"
            "  - image: {{ .image }}  # pinguard: ignore[templated]\n"
            "  - image: '{{ .image }} pinguard: ignore[templated]'\n{{- end }}\n")
    assert [f.line for f in check_rule(folder, "templated", {"pod.yaml": text})] == [6]


def test_the_lockfile_s_comments_suppress(folder: Path) -> None:
    (folder / "pod.yaml").write_text("kind: Pod\nspec:\n  containers:\n  - {name: a, image: nginx:1.25}\n")
    lock = lock_for(scan_paths(["pod.yaml"]).found)
    policy = Policy(rules={"unused-lock-entry": {"level": "error"}})
    text = dumps(lock)
    context = Context(lock, "pinguard.lock")
    assert [f.line for f in lint.findings(policy, [], context, text)] == [text.splitlines().index("[[image]]") + 1]
    above = "# pinguard: ignore[unused-lock-entry] kept for the nightly job\n[[image]]"
    beside = "[[image]]  # pinguard: ignore[unused-lock-entry]"
    for marked in (text.replace("[[image]]", above), text.replace("[[image]]", beside)):
        assert lint.findings(policy, [], context, marked) == []


def test_comment_readers_never_look_inside_strings() -> None:
    text = "RUN <<EOF\n# pinguard: ignore[unpinned]\nEOF\n# a comment\n"
    assert [text[start:end] for start, end in dockerfile.comments(text)] == ["# a comment"]
    text = "x: '# a' # b\ny: \"{{ \"#\" }}\" {{/* c */}}\nz: it's # d\n"
    assert [text[start:end] for start, end in templates.comments(text)] == ["# b", "{{/* c */", "# d"]
    text = "a: |2  # b\n   # c\nd: 'e # f'  # g\n"
    assert [text[start:end] for start, end in yamlnodes.comments(text)] == ["# b", "# g"]
    text = 'a = "# b" # c\nd = """\n# e\n"""#f\ng = \'#\'\n'
    assert [text[start:end] for start, end in lockfile.comments(text)] == ["# c", "#f"]


POD = '{"kind": "Pod", "spec": {"containers": [{"name": "pinguard: ignore[unpinned]", "image": "nginx:1.25"}]}}'


def test_a_long_line_is_read_once_however_many_findings_it_holds(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each Pod on the one line is a finding and holds a marker in a string; the comment at its end a real one."""
    policy = Policy(rules={"unpinned": {"level": "error"}})
    read: list[int] = []  # the length of each text whose comments were read
    comments = yamlnodes.comments
    monkeypatch.setattr(yamlnodes, "comments", lambda text: read.append(len(text)) or comments(str(text)))
    examined = []
    for pods in (300, 1200):
        (folder / "list.yaml").write_text(f'{{"kind": "List", "items": [{", ".join([POD] * pods)}]}}'
                                          "  # pinguard: ignore[denied-tags]\n")
        scanned = [dataclasses.replace(f, file=dataclasses.replace(f.file, text=CountingText(f.file.text)))
                   for f in scan_paths(["list.yaml"]).files]
        markers = CountingPattern(suppress._MARKER)
        written = CountingPattern(suppress._WRITTEN)
        monkeypatch.setattr(suppress, "_MARKER", markers)
        monkeypatch.setattr(suppress, "_WRITTEN", written)
        read.clear()
        found = lint.findings(policy, scanned, Context(lock_for([]), "pinguard.lock"), "")
        assert len(found) == pods and {f.line for f in found} == {1}
        assert len(read) == 1  # the comments of the file read once
        text = scanned[0].file.text
        assert isinstance(text, CountingText)
        examined.append(text.examined + markers.examined + written.examined + read[0])
    assert examined[1] <= 4.5 * examined[0]
