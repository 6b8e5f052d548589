"""Dockerfiles: `# syntax=`, `FROM`, `COPY --from=`, `RUN --mount=...,from=`, read the way BuildKit reads them.

Lines are joined at the escape character (`\\`, or the one a `# escape=`
directive sets), comment lines inside a continuation are dropped, and heredoc
bodies are skipped, so only real instructions are looked at. Every span points
into the original text: a value that a continuation splits, or that is quoted
only in part, is reported but never offered for rewriting.

`FROM $BASE` (or `${BASE}`) with a default in a global `ARG` is reported where
that default is written, since that is the text to pin. Any other use of a
build argument is reported as unresolvable. `COPY --from` is never expanded by
BuildKit, so a build argument there is unresolvable too.

A `# syntax=` parser directive names the frontend image BuildKit pulls to read
the file: it is reported, and pinned in place. Directives are read at the top of
the file the way BuildKit's two readers read them: its Dockerfile parser (which
honours `escape`) and the frontend detection (which finds `syntax`).
"""
from __future__ import annotations

import bisect
import json
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from pinguard.errors import InvalidReference
from pinguard.reference import parse
from pinguard.sources import kinds
from pinguard.sources.base import DEFAULT_SETTINGS, Found, Searched, SourceError, SourceSettings, Span

SOURCE = kinds.DOCKERFILE

# After the comment marker: a name, "=", a value, as BuildKit's pattern has it (Go's \s is these five).
_DIRECTIVE = re.compile(r"([A-Za-z][A-Za-z0-9]*)[\t\n\f\r ]*=[\t\n\f\r ]*(.+?)[\t\n\f\r ]*")
_DIRECTIVE_NAMES = frozenset(("syntax", "escape", "check"))  # any other name ends the directives
# Go's unicode.IsSpace, which BuildKit trims with; Python's str.isspace also takes \x1c-\x1f.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")  # the forms we expand
_VARIABLE_START = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")  # names any form, `${A:-x}` too
_ANY_VARIABLE = re.compile(r"\$(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)")  # a whole use of any form
_HEREDOC = re.compile(r"[0-9]*<<(-?)([^<]*)")
_STAGE_INDEX = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.Atoi accepts
_HEREDOC_COMMANDS = ("run", "copy", "add")
_SCRATCH = "scratch"
_BUILD_CONTEXT = "context"  # `COPY --from=context` means the build context in BuildKit, not an image
_PARTLY_QUOTED = "only part of the value is quoted; quote all of it or none of it to pin it"
_SPLIT = "the value is split by a line continuation; join it to pin it"


class _Reader(NamedTuple):
    """How one of BuildKit's readers looks for parser directives."""

    comment: str  # what starts a directive line
    indented: bool  # blanks may come before it
    shebang: bool  # a first line starting `#!` is passed over


_PARSER = _Reader("#", indented=True, shebang=False)  # the Dockerfile parser: it reads `escape`
# The frontend detection (`DetectSyntax`): `//` lines are tried only where `#` lines name no frontend.
_FRONTEND = (_Reader("#", indented=False, shebang=True), _Reader("//", indented=False, shebang=True))


@dataclass(frozen=True)
class _Directive:
    name: str  # lowercased
    value: str  # blanks around it trimmed
    start: int  # where the value starts in the file
    repeated: bool  # named before: BuildKit's parser fails here, its frontend detection stops


@dataclass(frozen=True)
class _Line:
    """One instruction with its continuation lines joined, and where each piece sits in the file."""

    text: str
    pieces: list[int]  # offset in `text` where each physical line's part begins
    origins: list[int]  # offset in the file of that same character

    def original(self, start: int, end: int) -> tuple[int, int, bool]:
        """File offsets of text[start:end], and whether that stretch is one unbroken run of the file."""
        first = bisect.bisect_right(self.pieces, start) - 1
        last = bisect.bisect_right(self.pieces, end - 1) - 1 if end > start else first
        begin = self.origins[first] + start - self.pieces[first]
        return begin, self.origins[last] + end - self.pieces[last], first == last


@dataclass(frozen=True)
class _Instruction:
    command: str  # lowercased
    line: _Line
    args: int  # offset in line.text where the arguments begin


@dataclass(frozen=True)
class _Arg:
    """A global build argument."""

    raw: str | None  # the default as written; None when declared without one
    value: str | None  # the default with quotes and earlier arguments worked out, when they can be
    span: tuple[int, int] | None  # where the default is written, when it can be pinned in place


@dataclass(frozen=True)
class _Scope:
    """What an image value may name instead of an image, and the build arguments it may use."""

    stages: Collection[str]  # lowercased stage names
    arguments: Mapping[str, _Arg] | None  # None where BuildKit expands none (COPY --from)

    def names_stage(self, value: str) -> bool:
        if value == _SCRATCH or value.lower() in self.stages:
            return True
        # Stage indexes and the build context can only follow --from.
        return self.arguments is None and (value == _BUILD_CONTEXT or _STAGE_INDEX.fullmatch(value) is not None)

    def may_name_stage(self, value: str) -> bool:
        """Whether a stage matches `value` whatever its unknown arguments hold: `FROM binary-$TARGETOS`."""
        parts = _ANY_VARIABLE.split(value.lower())
        return any(parts) and any(_glob_matches(parts, stage) for stage in self.stages)


def find(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS) -> Searched:
    return Searched(_Finder(text, path).run())


def comments(text: str) -> list[tuple[int, int]]:
    """Where the comment lines are, as [start, end) in order, as BuildKit reads them: a `#` first on a line
    (parser directives too), never in a heredoc body nor after an instruction."""
    try:
        finder = _Finder(text, "")
        for _ in finder._instructions():
            pass
    except SourceError:  # BuildKit refuses the file: it has no findings to suppress
        return []
    return finder.comments


class _Finder:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.line_starts = [0] + [match.end() for match in re.finditer("\n", text)]
        self.escape = self._escape_character()
        self.found: dict[int, Found] = {}  # by start, so a default used by several FROMs is reported once
        self.comments: list[tuple[int, int]] = []  # the comment lines `_instructions` passed over

    def run(self) -> list[Found]:
        self._frontend()
        instructions = list(self._instructions())
        stages = {name for item in instructions if (name := self._stage_name(item)) is not None}
        earlier: set[str] = set()  # FROM sees only the stages above it; --from sees them all
        arguments: dict[str, _Arg] = {}
        global_scope = True
        for item in instructions:
            if item.command == "arg" and global_scope:
                self._declare(item.line, item.args, arguments)
            elif item.command == "from":
                global_scope = False
                _, words = self._flags_and_words(item.line, item.args)
                if words:
                    self._image(item.line, *words[0], _Scope(earlier, arguments))
                name = self._stage_name(item)
                if name is not None:
                    earlier.add(name)
            elif item.command in ("copy", "run"):
                self._sources(item, _Scope(stages, None))
        return sorted(self.found.values(), key=lambda found: found.span.start)

    # Parser directives

    def _escape_character(self) -> str:
        """The escape character an `escape` directive sets, else the backslash.

        What BuildKit's parser refuses (a repeated directive, another escape character) is a SourceError.
        """
        escape = "\\"
        for directive in _directives(self.text, _PARSER):
            if directive.repeated:
                raise SourceError(f"only one {directive.name} parser directive can be used",
                                  *self._position(directive.start))
            if directive.name == "escape":
                if directive.value not in ("\\", "`"):
                    raise SourceError(f"invalid escape token '{directive.value}' does not match ` or \\",
                                      *self._position(directive.start))
                escape = directive.value
        return escape

    def _frontend(self) -> None:
        """Report the frontend image a `syntax` directive names: its first word (options for it may follow)."""
        syntax = next((d for reader in _FRONTEND for d in _directives(self.text, reader) if d.name == "syntax"), None)
        if syntax is None:
            return
        image = syntax.value.partition(" ")[0]
        names = _variable_names(image)
        listed = ", ".join(f"${{{name}}}" for name in names)
        problem = f"uses {listed}, which BuildKit does not expand in parser directives; cannot be resolved"
        if image:
            self._add(syntax.start, syntax.start + len(image), problem if names else None)

    # Reading instructions

    def _instructions(self) -> Iterator[_Instruction]:
        """Instructions as BuildKit's parser splits them, heredoc bodies left out."""
        count = len(self.line_starts)
        continuation = re.compile(re.escape(self.escape) + r"[ \t]*$")
        index = 0
        while index < count:
            start, body = self._physical(index)
            index += 1
            if index == 1 and body.startswith("\ufeff"):
                start, body = start + 1, body[1:]
            stripped = body.lstrip()
            start += len(body) - len(stripped)
            if stripped.startswith("#"):
                self.comments.append((start, start + len(stripped)))
                continue
            text, continued = _cut(stripped, continuation)
            if not continued and not text:
                continue
            pieces, origins = [0], [start]
            while continued and index < count:
                start, body = self._physical(index)
                index += 1
                stripped = body.lstrip()
                if stripped.startswith("#"):
                    self.comments.append((start + len(body) - len(stripped), start + len(body)))
                if not stripped or stripped.startswith("#"):
                    continue  # BuildKit drops empty and comment lines inside a continuation
                part, continued = _cut(body, continuation)
                pieces.append(len(text))
                origins.append(start)
                text += part
            line = _Line(text, pieces, origins)
            command, args = _split_command(text)
            yield _Instruction(command, line, args)
            for name, chomp in self._heredocs(command, line, args):
                opened = index
                while index < count:
                    body = self._physical(index)[1]
                    index += 1
                    if (body.lstrip("\t") if chomp else body) == name:
                        break
                else:
                    line_number, column = self._position(origins[0])
                    raise SourceError(
                        f"unterminated heredoc <<{name} (its body starts on line {opened + 1})", line_number, column
                    )

    def _physical(self, index: int) -> tuple[int, str]:
        """Where physical line `index` starts, and its text without the line ending."""
        start = self.line_starts[index]
        end = self.line_starts[index + 1] - 1 if index + 1 < len(self.line_starts) else len(self.text)
        return start, self.text[start:end].rstrip("\r")

    def _heredocs(self, command: str, line: _Line, args: int) -> list[tuple[str, bool]]:
        """The heredocs an instruction opens, in order: (terminator, whether leading tabs are stripped)."""
        if command == "onbuild":
            spans = _words(line.text, args, "\\")
            if not spans:
                return []
            command, args = line.text[spans[0][0] : spans[0][1]].lower(), spans[0][1]
        if command not in _HEREDOC_COMMANDS or "<<" not in line.text[args:]:
            return []
        _, rest = self._flags_and_words(line, args)
        if rest and line.text[rest[0][0]] == "[" and _is_json_list(line.text[rest[0][0] :]):
            return []
        heredocs: list[tuple[str, bool]] = []
        words = [line.text[start:end] for start, end in _words(line.text, args, "\\")]
        for index, word in enumerate(words):
            match = _HEREDOC.fullmatch(word)
            if match is None:
                continue
            name = match.group(2)
            if not name and not match.group(1) and index + 1 < len(words) and "<" not in words[index + 1]:
                name = words[index + 1]  # BuildKit allows blanks between "<<" and the terminator
            terminator = _expand(name, "\\", None) if name else None
            if terminator is not None:
                heredocs.append((terminator, match.group(1) == "-"))
        return heredocs

    def _flags_and_words(self, line: _Line, args: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Leading `--flag` words, then the other words, as spans of line.text."""
        words = _words(line.text, args, self.escape)
        count = 0
        while count < len(words) and line.text.startswith("--", words[count][0]):
            if words[count][1] - words[count][0] == 2:  # a bare "--" ends the flags
                return words[:count], words[count + 1 :]
            count += 1
        return words[:count], words[count:]

    def _stage_name(self, item: _Instruction) -> str | None:
        if item.command != "from":
            return None
        words = [item.line.text[start:end] for start, end in self._flags_and_words(item.line, item.args)[1]]
        if len(words) >= 3 and words[1].lower() == "as":
            return words[2].lower()
        return None

    # Build arguments

    def _declare(self, line: _Line, args: int, arguments: dict[str, _Arg]) -> None:
        """Record the global `ARG`s of one instruction: `ARG A=1 B="2" C`."""
        for start, end in _words(line.text, args, self.escape):
            name, equals, raw = line.text[start:end].partition("=")
            if not equals or not raw:
                arguments[name] = _Arg(None, None, None)
                continue
            values = {key: arg.value for key, arg in arguments.items()}
            span = None
            inner = _unquoted(raw)
            if inner is not None and "$" not in raw[inner[0] : inner[1]] and inner[1] > inner[0]:
                offset = start + len(name) + 1
                begin, finish, whole = line.original(offset + inner[0], offset + inner[1])
                span = (begin, finish) if whole else None
            arguments[name] = _Arg(raw, _expand(raw, self.escape, values), span)

    # Image values

    def _image(self, line: _Line, start: int, end: int, scope: _Scope) -> None:
        """Report the image named by line.text[start:end], unless it names a stage."""
        if start == end:
            return  # BuildKit reads an empty --from as no --from
        raw = line.text[start:end]
        arguments = scope.arguments
        values = None if arguments is None else {key: arg.value for key, arg in arguments.items()}
        inner = _unquoted(raw)
        if inner is None:
            expanded = _expand(raw, self.escape, values)
            if expanded is None or not scope.names_stage(expanded):
                self._report(line, start, end, _variables_problem(raw) or _PARTLY_QUOTED)
            return
        start, end, quote = start + inner[0], start + inner[1], inner[2]
        value = line.text[start:end]
        names = [] if quote == "'" else _variable_names(value)
        if not names:
            if not scope.names_stage(value):
                self._report(line, start, end)
            return
        expanded = None if values is None else _expand(value, self.escape, values)
        if expanded is not None and scope.names_stage(expanded):
            return
        if expanded is None and arguments is not None and scope.may_name_stage(value):
            return
        single = _VARIABLE.fullmatch(value)
        if single is None or arguments is None:
            self._report(line, start, end, _variables_problem(value))
            return
        name = single.group(1) or single.group(2)
        arg = arguments.get(name)
        if arg is not None and arg.span is not None:
            self._add(*arg.span)
            return
        if arg is None:
            why = "which is not declared before the first FROM; cannot be resolved"
        elif arg.raw is None:
            why = "which has no default; cannot be resolved"
        else:
            why = f'whose default "{arg.raw}" cannot be pinned in place'
        self._report(line, start, end, f"uses build argument ${{{name}}}, {why}")

    def _sources(self, item: _Instruction, scope: _Scope) -> None:
        """Images named by `COPY --from=` or by `from=` in a `RUN --mount=`."""
        flags, _ = self._flags_and_words(item.line, item.args)
        text = item.line.text
        for start, end in flags:
            name, equals, _ = text[start + 2 : end].partition("=")
            value = start + 2 + len(name) + 1
            if not equals:
                continue
            if item.command == "copy" and name == "from":
                self._image(item.line, value, end, scope)
            elif item.command == "run" and name == "mount":
                for field in re.finditer(r"[^,]+", text[value:end]):
                    key, equals, _ = field.group().partition("=")
                    if equals and key.lower() == "from":
                        self._image(item.line, value + field.start() + len(key) + 1, value + field.end(), scope)

    # Results

    def _report(self, line: _Line, start: int, end: int, problem: str | None = None) -> None:
        begin, finish, whole = line.original(start, end)
        if whole:
            self._add(begin, finish, problem)
        else:
            self._add(begin, finish, _SPLIT)

    def _add(self, start: int, end: int, problem: str | None = None) -> None:
        if start in self.found:
            return
        value = self.text[start:end]
        reference = None
        if problem is None:
            try:
                reference = parse(value)
            except InvalidReference as exc:
                problem = str(exc)
        line, column = self._position(start)
        self.found[start] = Found(self.path, SOURCE, Span(start, end, line, column), value, reference, problem)

    def _position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1


def _directives(text: str, reader: _Reader) -> Iterator[_Directive]:
    """The parser directives at the top of `text`, as `reader` finds them.

    They end at the first line that is not one (an instruction, any other comment, an
    empty line), and after a repeated one.
    """
    seen: set[str] = set()
    top = position = 1 if text.startswith("\ufeff") else 0
    while position <= len(text):
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        line = text[position:end].rstrip("\r")
        if not (reader.shebang and position == top and line.startswith("#!")):
            body = line.lstrip(_GO_SPACE) if reader.indented else line
            rest = body.removeprefix(reader.comment).lstrip(_GO_SPACE)
            match = _DIRECTIVE.fullmatch(rest) if body.startswith(reader.comment) else None
            if match is None or match.group(1).lower() not in _DIRECTIVE_NAMES:
                return
            name = match.group(1).lower()
            start = position + len(line) - len(rest) + match.start(2)
            yield _Directive(name, match.group(2), start, name in seen)
            if name in seen:
                return
            seen.add(name)
        position = end + 1


def _cut(line: str, continuation: re.Pattern[str]) -> tuple[str, bool]:
    """The line without a trailing continuation, and whether there was one."""
    match = continuation.search(line)
    return (line, False) if match is None else (line[: match.start()], True)


def _split_command(text: str) -> tuple[str, int]:
    """The lowercased instruction name and where its arguments begin."""
    match = re.match(r"\s*([^\t\v\f\r ]+)[\t\v\f\r ]*", text)
    return ("", len(text)) if match is None else (match.group(1).lower(), match.end())


def _words(text: str, start: int, escape: str) -> list[tuple[int, int]]:
    """Blank-separated words of text[start:], quotes and escaped characters kept inside their word."""
    words: list[tuple[int, int]] = []
    index, end = start, len(text)
    while True:
        while index < end and text[index].isspace():
            index += 1
        if index == end:
            return words
        begin, quote = index, ""
        while index < end:
            char = text[index]
            if quote:
                if char == quote:
                    quote = ""
                elif char == escape and quote == '"' and index + 1 < end:
                    index += 1
            elif char.isspace():
                break
            elif char in "'\"":
                quote = char
            elif char == escape and index + 1 < end:
                index += 1
            index += 1
        words.append((begin, index))


def _unquoted(raw: str) -> tuple[int, int, str] | None:
    """Where the value lies inside `raw` and its quote: all of `raw`, or inside one pair of quotes.

    None when quotes appear anywhere else: such a value cannot be edited in place.
    """
    if len(raw) >= 2 and raw[0] in "'\"" and raw[-1] == raw[0] and not any(c in "'\"" for c in raw[1:-1]):
        return 1, len(raw) - 1, raw[0]
    if any(c in "'\"" for c in raw):
        return None
    return 0, len(raw), ""


def _expand(raw: str, escape: str, values: Mapping[str, str | None] | None) -> str | None:
    """`raw` with quotes removed and `$NAME`/`${NAME}` replaced from `values`.

    None when a variable has no known value, uses another form, or a quote is left open.
    With `values` None, "$" is kept as it is.
    """
    out: list[str] = []
    quote = ""
    index = 0
    while index < len(raw):
        char = raw[index]
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                out.append(char)
        elif char == escape and index + 1 < len(raw) and (not quote or raw[index + 1] in ('"', "$", escape)):
            index += 1
            out.append(raw[index])
        elif char in "'\"" and (not quote or char == quote):
            quote = "" if quote else char
        elif char == "$" and values is not None:
            match = _VARIABLE.match(raw, index)
            value = None if match is None else values.get(match.group(1) or match.group(2))
            if match is None or value is None:
                return None
            out.append(value)
            index = match.end()
            continue
        else:
            out.append(char)
        index += 1
    return None if quote else "".join(out)


def _glob_matches(parts: list[str], name: str) -> bool:
    """Whether `name` is the literal `parts` in order with anything between them."""
    if len(parts) == 1:
        return name == parts[0]
    first, last = parts[0], parts[-1]
    if len(first) + len(last) > len(name) or not (name.startswith(first) and name.endswith(last)):
        return False
    position, limit = len(first), len(name) - len(last)
    for part in parts[1:-1]:  # taking each part as early as it occurs never rules out a match
        position = name.find(part, position, limit)
        if position < 0:
            return False
        position += len(part)
    return True


def _variable_names(value: str) -> list[str]:
    return list(dict.fromkeys(match.group(1) for match in _VARIABLE_START.finditer(value)))


def _variables_problem(value: str) -> str | None:
    names = _variable_names(value)
    if not names:
        return None
    listed = ", ".join(f"${{{name}}}" for name in names)
    if len(names) == 1:
        return f"uses build argument {listed}; cannot be resolved without it"
    return f"uses build arguments {listed}; cannot be resolved without them"


def _is_json_list(text: str) -> bool:
    """Whether the arguments are in JSON form (`RUN ["sh", "-c", "..."]`), where "<<" is no heredoc."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # deep nesting exhausts the decoder's recursion
        return False
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
