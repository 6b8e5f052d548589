"""The pages say only what exists: the commands and flags they write, the links between them, a page per command.

Every `pinguard COMMAND [flags]` in a fenced block or inline code of README.md and docs/**/*.md names a command
of the command line, and every flag it uses is one that command's parser accepts; so does inline code that
starts with a command's name and a flag (`pin --to`). Every relative link leads to a file, and to a heading of
it where it names one. The parser is the command line's own (`cli.parser`), so a flag renamed or dropped
there fails here until the pages follow.
"""
from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard import cli

ROOT = Path(cli.__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_INVOKED = re.compile(r"(?<![\w.$/=@'\"-])pinguard[ \t]+(?P<rest>\S.*)")
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
_INLINE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*")
_ANGLED = re.compile(r"<[^<>\s][^<>]*>")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = cli.parser()
    return next(action.choices for action in parser._actions if isinstance(action, argparse._SubParsersAction))


COMMANDS = _commands()


def _split(text: str) -> tuple[list[tuple[int, str]], str]:
    """The lines of fenced blocks (a line ending in `\\` joined to the next) with their numbers, and the rest
    of the text with each fenced line blanked, so offsets still give line numbers."""
    fenced: list[tuple[int, str]] = []
    prose: list[str] = []
    inside, pending, start = False, "", 0
    for number, line in enumerate(text.split("\n"), 1):
        if _FENCE.match(line):
            inside = not inside
            prose.append("")
            continue
        if not inside:
            prose.append(line)
            continue
        prose.append("")
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        fenced.append((start, pending + line))
        pending = ""
    return fenced, "\n".join(prose)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _code(text: str) -> Iterator[tuple[int, str, bool]]:
    """Each piece of code with its line: fenced lines, then inline spans (newlines read as spaces); True for inline."""
    fenced, prose = _split(text)
    for number, line in fenced:
        yield number, line, False
    for match in _INLINE.finditer(prose):
        yield _line(prose, match.start()), match.group(2).replace("\n", " "), True


def _arguments(rest: str) -> str:
    """What follows `pinguard` up to where the shell command ends: a pipe, `&&` or `;` outside brackets, a
    comment, the end of inline code. `text|json` and `[--dry-run | --local]` are a synopsis's, not pipes."""
    depth = 0
    for index, char in enumerate(rest):
        before = rest[index - 1] if index else " "
        if char in "[(":
            depth += 1
        elif char in "])":
            if depth == 0:
                return rest[:index]
            depth -= 1
        elif char == "`" or (char == "#" and before.isspace()):
            return rest[:index]
        elif depth == 0 and (rest.startswith("&&", index) or char == ";" or (char == "|" and before.isspace())):
            return rest[:index]
    return rest


def _invocations(code: str, inline: bool) -> Iterator[tuple[str, list[str]]]:
    """(command, flags) of every pinguard command line in a piece of code; `<where pinguard is published>`
    is a placeholder, not one."""
    code = _ANGLED.sub(" ", code)
    match = _INVOKED.search(code)
    while match:
        words = _arguments(match.group("rest")).split()
        if words:
            yield words[0], _FLAG.findall(" ".join(words[1:]))
        match = _INVOKED.search(code, match.start("rest"))
    words = code.split()
    if inline and len(words) > 1 and words[0] in COMMANDS and words[1].startswith("-"):
        yield words[0], _FLAG.findall(_arguments(" ".join(words[1:])))


def _accepted(command: str) -> set[str] | None:
    """The flags a command takes; a placeholder (`pinguard COMMAND --help`) takes those every command takes;
    None for no command."""
    if _PLACEHOLDER.fullmatch(command):
        return set.intersection(*(set(parser._option_string_actions) for parser in COMMANDS.values()))
    return set(COMMANDS[command]._option_string_actions) if command in COMMANDS else None


def _command_problems(page: str, text: str) -> Iterator[str]:
    top = set(cli.parser()._option_string_actions)
    for number, code, inline in _code(text):
        for command, flags in _invocations(code, inline):
            if command.startswith("-"):
                command, flags = "", [command, *flags]
                accepted: set[str] | None = top
            else:
                accepted = _accepted(command)
            if accepted is None:
                yield f"{page}:{number}: `pinguard {command}`: no such command"
                continue
            yield from (f"{page}:{number}: `pinguard {command}`: no flag {flag}" for flag in flags
                        if flag not in accepted)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without markup, lower case, punctuation dropped, spaces
    turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a second heading of the same text gets `-1`, as GitHub numbers them."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in _split(text)[1].split("\n"):
        heading = _HEADING.match(line)
        if heading:
            base = slug(heading.group(1))
            found.add(f"{base}-{seen[base]}" if base in seen else base)
            seen[base] = seen.get(base, 0) + 1
    return found


def _link_problems(path: Path, page: str, text: str) -> Iterator[str]:
    prose = _INLINE.sub(lambda code: re.sub(r"[^\n]", " ", code.group(0)), _split(text)[1])
    for match in _LINK.finditer(prose):
        target = match.group(1)
        if re.match(r"[a-z][a-z+.-]*:", target):  # https:, mailto:: not between the pages
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        where = f"{page}:{_line(prose, match.start())}: link {target}"
        if not linked.is_file():
            yield f"{where}: no such file"
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text(encoding="utf-8")):
            yield f"{where}: no such heading in {linked.name}"


def problems(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    page = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    return [*_command_problems(page, text), *_link_problems(path, page, text)]


def test_the_pages_are_found() -> None:
    assert {ROOT / "README.md", ROOT / "docs" / "architecture.md", ROOT / "docs" / "commands" / "pin.md"} <= set(PAGES)


@pytest.mark.parametrize("path", PAGES, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_command_flag_and_link_of_a_page_exists(path: Path) -> None:
    assert problems(path) == []


def test_every_command_has_its_page_and_every_page_its_command() -> None:
    pages = {path.stem for path in (ROOT / "docs" / "commands").glob("*.md")} - {"README"}
    assert pages == set(COMMANDS)


CHECKED = """\
```sh
pinguard check [PATH...] [--format text|json|sarif|github] [--strict]
kustomize build . | pinguard post-render --lockfile pinguard.lock | kubectl apply -f -
pinguard export admission --format vap \\
    --mode warn
```
The lock is read by `pinguard check --lockfile FILE` and
`verify --copies
--deep`; see [the rules](rules.md#the-rules) and [`pin --to`](#a-heading).

## A heading
"""


@pytest.mark.parametrize(("change", "problem"), [
    (("[--strict]", "[--no-such-flag]"), "page.md:2: `pinguard check`: no flag --no-such-flag"),
    (("--lockfile pinguard.lock", "--lockfil pinguard.lock"), "page.md:3: `pinguard post-render`: no flag --lockfil"),
    (("    --mode warn", "    --mood warn"), "page.md:4: `pinguard export`: no flag --mood"),
    (("`pinguard check --lockfile", "`pinguard check --lock"), "page.md:7: `pinguard check`: no flag --lock"),
    (("--deep`", "--deeper`"), "page.md:8: `pinguard verify`: no flag --deeper"),
    (("`pinguard check --lockfile", "`pinguard chek --lockfile"), "page.md:7: `pinguard chek`: no such command"),
    (("(rules.md#", "(rule.md#"), "page.md:9: link rule.md#the-rules: no such file"),
    (("#the-rules)", "#the-rule)"), "page.md:9: link rules.md#the-rule: no such heading in rules.md"),
    (("(#a-heading)", "(#b-heading)"), "page.md:9: link #b-heading: no such heading in page.md"),
])
def test_a_made_up_flag_command_or_link_is_found(tmp_path: Path, change: tuple[str, str], problem: str) -> None:
    (tmp_path / "rules.md").write_text("# The rules\n")
    page = tmp_path / "page.md"
    page.write_text(CHECKED)
    assert problems(page) == []  # what the cases change is read, and right, before the change
    page.write_text(CHECKED.replace(*change))
    assert problems(page) == [problem]


def test_flags_after_a_pipe_or_a_comment_are_not_pinguard_s() -> None:
    code = ("helm template app ./chart --post-renderer pinguard  # --no-such\n"
            "kubectl apply --field-manager=pinguard -f x")
    assert [invocation for number, line, inline in _code(f"```\n{code}\n```\n")
            for invocation in _invocations(line, inline)] == []


def test_anchors_are_github_s() -> None:
    page = "# Charts that cannot carry a digest: `pinguard post-render`\n## A\n## A\n```\n# no heading\n```\n"
    assert anchors(page) == {"charts-that-cannot-carry-a-digest-pinguard-post-render", "a", "a-1"}


def test_the_readme_s_test_command_is_the_one_ci_runs() -> None:
    """CI runs the quick start's test command: `.ci/run` ends with it, as the README writes it."""
    fenced, _ = _split((ROOT / "README.md").read_text(encoding="utf-8"))
    command = next(line.partition("#")[0].strip() for _, line in fenced if line.endswith("# run the tests"))
    assert command == ".venv/bin/python -m pytest"
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1] == command
