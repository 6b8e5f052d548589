"""Shared by the YAML source kinds: parse once, a document at a time, locate scalars exactly, build `Found` records.

PyYAML (libyaml when present) gives every node its start and end as character
indexes into the decoded text, so a scalar's span is exact and editing it
changes nothing else. A scalar whose source text differs from its value
(escapes, line folding, block scalars of more than one line) is reported, never rewritten.

Documents are read as Go's YAML reads them (Helm, kubectl, kustomize), decoded once as
they are parsed: escapes (PyYAML decodes them), `!!binary` values and keys decoded, and of
a key written twice in one mapping only the last pair kept, the earlier ones recorded
(`duplicates`): no source can see a value its consumer never reads.
"""
from __future__ import annotations

import base64
import binascii
import bisect
import functools
import itertools
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.errors import InvalidReference
from pinguard.reference import Reference, parse
from pinguard.sources.base import DigestField, Found, SourceError, Span, Unreadable

_NULL = "tag:yaml.org,2002:null"
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_BINARY = "tag:yaml.org,2002:binary"
_CORE = "tag:yaml.org,2002:"  # Go's YAML resolves these tags; it keeps any other as a string
_NOT_BASE64 = "!pinguard:not-base64"  # a `!!binary` value Go's YAML cannot decode: it refuses the document
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_TOO_DEEP = "maximum nesting depth"


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's parser with the one tag decision pinguard needs: null or not.

    The stock resolver tries a dozen regular expressions on every scalar (ints,
    floats, booleans, timestamps); sources only ever ask whether a value is null.
    """

    # No path-based resolvers are registered: skip the bookkeeping done for every node.
    def descend_resolver(self, current_node: object, current_index: object) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            if implicit[0] and value in _NULLS:
                return _NULL
            return _MERGE if implicit[0] and value == "<<" else _STR
        return "tag:yaml.org,2002:map" if kind is MappingNode else "tag:yaml.org,2002:seq"

_TEMPLATE = re.compile(r"\{\{|\$\{|\$\(|^\$[A-Za-z_]|<%|\{%")
_PATTERN = re.compile(r"[*?!|]")  # policy patterns (Kyverno, Gatekeeper), never image references
# Words in a one-line value are a placeholder an operator fills in ("FILLED BY THE OPERATOR", as
# NVIDIA's GPU operator ships its assets), never an image reference.
_PLACEHOLDER = re.compile(r"\S[ \t]+\S")


def compose(text: str) -> list[Node]:
    """Every document of `text`, all at once (`each_document` reads them one at a time)."""
    return list(each_document(text))


def each_document(text: str) -> Iterator[Node]:
    """Every document of `text`, composed and decoded when it is asked for: a file's documents need never be held
    at once, as their nodes take some fifty times the text. A syntax error becomes a SourceError with its
    position, raised when the document that holds it is reached.
    """
    tagged = "!" in text
    try:
        for document in yaml.compose_all(_Chunks(text), Loader=_Loader):
            if document is not None:
                _decode(document, tagged)
                yield document
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = str(exc.problem or exc.context)
        if _TOO_DEEP in problem:  # libyaml's bound on nesting: the text may be valid YAML, but not read
            raise Unreadable(f"YAML nested too deeply to read ({problem})", line, column) from None
        raise SourceError(f"invalid YAML: {problem}", line, column) from None
    except yaml.YAMLError as exc:
        raise SourceError(f"invalid YAML: {exc}", 1, 1) from None
    except RecursionError:  # PyYAML's own composer, where libyaml is missing, recurses once per level
        raise Unreadable("YAML nested too deeply to read", 1, 1) from None


class _Chunks:
    """A text handed to the parser a piece at a time: given the whole string, libyaml keeps a UTF-8 copy of it."""

    name = "<unicode string>"  # what PyYAML calls a string it reads

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def read(self, size: int = -1) -> str:
        end = len(self.text) if size < 0 else self.at + size
        piece = self.text[self.at:end]
        self.at += len(piece)
        return piece


class Duplicate(NamedTuple):
    """A key written again in the same mapping: `shadowed` is dropped, `kept` is the pair Go's YAML reads."""

    shadowed: ScalarNode
    kept: ScalarNode


_DUPLICATES = "pinguard_duplicates"  # the attribute of a document's root node that holds them, when there are any


def duplicates(document: Node) -> list[Duplicate]:
    """The keys written twice in a document `compose` returned, in the order they are written."""
    found: list[Duplicate] = getattr(document, _DUPLICATES, [])
    return found


def _decode(document: Node, tagged: bool) -> None:
    """Make a document what Go's YAML reads: `!!binary` scalars decoded (`tagged`: the text holds a `!`, as
    every tag is written), and of each key written twice in one mapping the last pair alone (keys merged in
    with `<<` are not written twice: own keys win).

    One pass over the mappings and sequences, each once however many aliases reach it.
    """
    found: list[Duplicate] = []
    seen: set[int] = set()
    stack: list[Node] = [document]
    push = stack.append
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is MappingNode:
            pairs = node.value
            if tagged:  # before keys are compared: `!!binary aW1hZ2U=` is the key `image`
                _decode_binaries(item for pair in pairs for item in pair)
            keys: set[object] = set()
            for key, value in pairs:
                if type(value) is not ScalarNode:
                    push(value)
                if type(key) is ScalarNode:
                    keys.add(key.value)
                else:
                    push(key)
            if len(keys) < len(pairs) and len(pairs) > 1:
                node.value = _last_wins(pairs, found)
        elif type(node) is SequenceNode:
            for item in node.value:
                if type(item) is not ScalarNode:
                    push(item)
            if tagged:
                _decode_binaries(node.value)
        elif tagged:
            _decode_binaries((node,))
    if found:  # kept with the document: it lives as long as the nodes it points at
        setattr(document, _DUPLICATES, sorted(found, key=lambda d: d.shadowed.start_mark.index))


def _decode_binaries(nodes: Iterable[Node]) -> None:
    for node in nodes:
        if type(node) is ScalarNode and node.tag == _BINARY:
            _decode_binary(node)


def _last_wins(pairs: list[tuple[Node, Node]], found: list[Duplicate]) -> list[tuple[Node, Node]]:
    """The pairs of a mapping, each scalar key once: its last; the earlier ones go to `found`."""
    last: dict[str, ScalarNode] = {}
    for key, _ in pairs:
        if type(key) is ScalarNode and key.tag != _MERGE:
            last[key.value] = key
    kept: list[tuple[Node, Node]] = []
    for key, value in pairs:
        if type(key) is ScalarNode and key.tag != _MERGE and last[key.value] is not key:
            found.append(Duplicate(key, last[key.value]))
        else:
            kept.append((key, value))
    return kept


def _decode_binary(node: ScalarNode) -> None:
    """A `!!binary` scalar's value as Go's YAML reads it: base64 (line breaks ignored) of UTF-8 text."""
    try:
        data = base64.b64decode(str(node.value).replace("\n", "").replace("\r", ""), validate=True)
    except (binascii.Error, ValueError):
        node.tag = _NOT_BASE64
        return
    node.value = data.decode("utf-8", "replace")


def may_hold(text: str, word: str) -> bool:
    """Whether YAML `text` may hold `word` as a key or value once decoded: a cheap test that never says no
    to one that does. Only a backslash escape (`"\\x69mage"`) or a tag (`!!binary`, `!<...>`, or one
    a `%TAG` directive names) writes a word without its letters."""
    return word in text or "\\" in text or "!!" in text or "!<" in text or "%TAG" in text


def is_templated(value: str) -> bool:
    return _TEMPLATE.search(value) is not None


def mapping_get(node: Node | None, key: str) -> Node | None:
    """The value of `key`, its own or merged in with `<<: *anchor`, as a YAML loader sees it."""
    for mapping in _layers(node):
        for k, v in mapping.value:
            if isinstance(k, ScalarNode) and k.value == key:
                found: Node = v
                return found
    return None


def mapping_pairs(node: Node | None) -> list[tuple[ScalarNode, Node]]:
    """Every key and value Go's YAML sees in a mapping: its own pairs (of a key written twice, the last:
    `compose` keeps no other), then those merged in with `<<` that no pair before names."""
    pairs: list[tuple[ScalarNode, Node]] = []
    named: set[str] = set()
    for mapping in _layers(node):
        own = [(k, v) for k, v in mapping.value if isinstance(k, ScalarNode) and k.tag != _MERGE]
        pairs.extend((k, v) for k, v in own if k.value not in named)
        named.update(k.value for k, _ in own)
    return pairs


def _layers(node: Node | None) -> Iterator[MappingNode]:
    """A mapping, then those merged into it with `<<`, in the order their keys count: own keys win,
    then earlier merges, depth first, as YAML says.

    Each mapping once: one merged again and again through aliases (a merge-key bomb) would
    otherwise be read once per path to it, a number that grows exponentially with the nesting.
    """
    seen: set[int] = set()
    stack: list[Node | None] = [node]
    while stack:
        mapping = stack.pop()
        if not isinstance(mapping, MappingNode) or id(mapping) in seen:
            continue
        seen.add(id(mapping))
        yield mapping
        merged: list[Node] = []
        for k, v in mapping.value:
            if isinstance(k, ScalarNode) and k.tag == _MERGE:
                merged.extend(v.value if isinstance(v, SequenceNode) else [v])
        stack.extend(reversed(merged))  # the first merged mapping is read first


def scalar_text(node: Node | None) -> str | None:
    """The value of a string scalar, else None."""
    if isinstance(node, ScalarNode) and node.tag != _NULL:
        return str(node.value)
    return None


def _not_a_string(node: ScalarNode) -> str | None:
    """Why Go's YAML reads no string from a scalar with an explicit tag, else None.

    `!!str` and `!!binary` are strings, and Go keeps a local or foreign tag's value as the string it
    is (`!foo x`); any other core tag (`!!int`, `!!bool`, ...) makes a Kubernetes string field an error.
    """
    tag = str(node.tag)
    if tag == _NOT_BASE64:
        return "tagged `!!binary` but no base64: Go's YAML refuses the document"
    if tag.startswith(_CORE) and tag not in (_STR, _BINARY, _NULL):
        return f"tagged `!!{tag.removeprefix(_CORE)}`: Go's YAML reads no string there, and Kubernetes refuses it"
    return None


def scalars_under(root: Node, keys: frozenset[str]) -> list[tuple[MappingNode, str, ScalarNode]]:
    """(mapping, key, value) for every scalar value of one of `keys` below `root`, each node once.

    The hot path of every scan: a plain loop, where `walk_pairs` pays a generator step per pair.
    """
    found: list[tuple[MappingNode, str, ScalarNode]] = []
    seen: set[int] = set()
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is MappingNode:
            for key, value in node.value:
                if type(value) is ScalarNode:
                    if type(key) is ScalarNode and key.value in keys:  # a key may be a mapping: `{{}}: x`
                        found.append((node, key.value, value))
                else:
                    stack.append(value)
        elif type(node) is SequenceNode:
            stack.extend(item for item in node.value if type(item) is not ScalarNode)
    return found


def walk_pairs(root: Node) -> Iterator[tuple[MappingNode, ScalarNode, Node]]:
    """Every (mapping, key, value) below `root`, each node visited once even through aliases."""
    seen: set[int] = set()
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode):
                    yield node, key, value
                if not isinstance(value, ScalarNode):
                    stack.append(value)
        elif isinstance(node, SequenceNode):
            stack.extend(item for item in node.value if not isinstance(item, ScalarNode))


def expanded_size(root: Node, cap: int) -> int:
    """How many nodes `root` holds once its aliases are expanded, as a tree walk meets them; at most `cap`.

    Each node's size is worked out once, from its children's: linear in the nodes
    written, however far the aliases would multiply them. A node that holds itself
    (`&a [*a]`) never ends: `cap`.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[Node] = [root]
    while stack:
        node = stack[-1]
        if id(node) in sizes:
            stack.pop()
            continue
        children = _children(node)
        if id(node) not in open_nodes:
            open_nodes.add(id(node))
            for child in children:
                if id(child) in open_nodes and id(child) not in sizes:
                    return cap  # an ancestor of its own
            stack.extend(child for child in children if id(child) not in sizes)
            continue
        stack.pop()
        sizes[id(node)] = min(cap, 1 + sum(sizes[id(child)] for child in children))
    return sizes[id(root)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [item for pair in node.value for item in pair]
    return list(node.value) if isinstance(node, SequenceNode) else []


@dataclass(frozen=True)
class Located:
    """A file being searched: its text, and where found values are reported."""

    text: str
    path: str
    source: str

    def span(self, start: int, end: int) -> Span:
        line, column = self._lines.position(start)
        return Span(start, end, line, column)

    def reference(self, written: str) -> tuple[str, Reference]:
        """`written` read as a reference (InvalidReference if it is none), and the copy of it the file's records
        keep: a file naming one image many times holds it, and what it reads as, once."""
        known = self._references.get(written)
        if known is None:
            known = written, parse(written)
            if len(self._references) < _KNOWN_REFERENCES:
                self._references[written] = known
        return known

    @functools.cached_property
    def _lines(self) -> _Lines:
        return _Lines(self.text)

    @functools.cached_property
    def _references(self) -> dict[str, tuple[str, Reference]]:
        return {}


_KNOWN_REFERENCES = 4096  # the distinct references a file's records share; past that, each is its own


class _Lines:
    """1-based line and column of offsets into one text, lines ending at its line break character.

    Sources ask about in the order of the text, a document at a time: the breaks are counted
    from the offset asked before, forward or back, and nothing is kept. Asked all over a large
    text, that would be quadratic in its size, so once the counting has read the text a few
    times over, a table of line starts takes over.
    """

    _PASSES = 4  # building the table costs about four counts of the whole text

    def __init__(self, text: str) -> None:
        self.text = text
        self.brk = line_break(text)[-1]  # "\n" for LF and CRLF, "\r" for lone CR
        self.budget = self._PASSES * len(text)
        self.at, self.line = 0, 1  # the offset asked before, and its line
        self.starts: array[int] | None = None

    def position(self, index: int) -> tuple[int, int]:
        if self.starts is None:
            line_start = self.text.rfind(self.brk, 0, index) + 1
            self.budget -= abs(index - self.at) + index - line_start
            if self.budget >= 0:
                if index >= self.at:
                    self.line += self.text.count(self.brk, self.at, index)
                else:
                    self.line -= self.text.count(self.brk, index, self.at)
                self.at = index
                return self.line, index - line_start + 1
            self.starts = _line_starts(self.text, self.brk)
        row = bisect.bisect_right(self.starts, index) - 1
        return row + 1, index - self.starts[row] + 1


_PIECE = 1 << 20  # characters split at a time while the table is built


def _line_starts(text: str, brk: str) -> array[int]:
    """Where each line starts: 0, then one past every `brk`; 8 bytes a line, the text split a piece at a time."""
    starts = array("q", [0])
    for at in range(0, len(text), _PIECE):
        lines = text[at:at + _PIECE].split(brk)
        lines.pop()  # what follows the piece's last break: the next piece goes on with it
        # One past each break; not `at` itself, which the piece before gave where a break ended it.
        starts.extend(itertools.islice(itertools.accumulate(map((1).__add__, map(len, lines)), initial=at), 1, None))
    return starts


# Outside its scalars YAML writes no `#` but a comment's: between two of the parser's events lie only indicators,
# blanks, line breaks and comments (no tag, anchor or `---` holds a `#`).
_HASH = re.compile("#")
_REST_OF_LINE = re.compile(r"[^\r\n]*")
_BLOCK_STYLES = ("|", ">")


def comments(text: str) -> list[tuple[int, int]]:
    """Where the comments are, as [start, end) in order: each `#` between the parser's events, or after a block
    scalar's header (`|  # why`), never one inside a scalar, however it is written.

    One pass of libyaml's parser, stopped once every `#` of the text is placed; a text it cannot parse is a
    SourceError.
    """
    hashes = [match.start() for match in _HASH.finditer(text)]
    spans: list[tuple[int, int]] = []
    placed, done = 0, 0  # how many `#` are placed; where the events so far end
    header_end: int | None = None  # where the header's line ends, when the event that ends at `done` is a block scalar
    try:
        for event in yaml.parse(_Chunks(text), Loader=_Loader):
            if event.start_mark is None or event.end_mark is None:  # libyaml marks every event; the types allow none
                continue
            start = event.start_mark.index
            while placed < len(hashes) and hashes[placed] < start:
                at = hashes[placed]
                if at >= done or (header_end is not None and at < header_end and text[at - 1] in " \t"):
                    end = _line_end(text, at)
                    spans.append((at, end))
                    placed = bisect.bisect_left(hashes, end, placed)
                else:
                    placed += 1  # inside a scalar
            if placed == len(hashes):
                break
            if event.end_mark.index > done:
                done = event.end_mark.index
                block = type(event) is yaml.ScalarEvent and event.style in _BLOCK_STYLES
                header_end = _line_end(text, start) if block else None
    except yaml.YAMLError as exc:
        raise SourceError(f"invalid YAML: {exc}", 1, 1) from None
    return spans


def _line_end(text: str, at: int) -> int:
    rest = _REST_OF_LINE.match(text, at)
    return rest.end() if rest else at  # it matches wherever `at` is


def line_break(text: str) -> str:
    """The file's line break: LF, CRLF, or a lone CR (old Mac files, which YAML accepts)."""
    lf = text.find("\n")
    if lf < 0:
        return "\r" if "\r" in text else "\n"
    return "\r\n" if text[lf - 1:lf] == "\r" else "\n"


def value_span(node: ScalarNode) -> tuple[int, int]:
    """Where a one-line plain or quoted scalar's value sits, quotes, anchor and tag excluded.

    Measured back from the end: the start mark of an anchored (`&a value`) or tagged
    scalar points at the anchor. Callers check the text there is the value.
    """
    end = node.end_mark.index - (1 if node.style in ("'", '"') else 0)
    return end - len(str(node.value)), end


def same_position(index: int) -> int:
    """Positions of a node parsed from the file itself need no mapping."""
    return index


def found_at(node: ScalarNode, where: Located, *, prefix: str = "",
             to_file: Callable[[int], int] = same_position) -> Found | None:
    """The reference a scalar holds, or a Found saying why it cannot be pinned; None when it is no image.

    `prefix` is text to skip before the reference (`docker://`). `to_file` maps the node's
    positions to the file's when the node comes from YAML embedded in a string. A block
    scalar (`|`, `>-`, ...) is read on its content line when its value is that one line.
    """
    value = str(node.value)
    if node.tag == _NULL or value.isspace() or not value.startswith(prefix):
        return None  # `image: null` or `~`: the value comes from elsewhere (a chart's global image)
    refused = _not_a_string(node) if node.tag != _STR else None
    if refused is not None:
        whole = where.span(to_file(node.start_mark.index), to_file(node.end_mark.index))
        return Found(where.path, where.source, whole, where.text[whole.start:whole.end], None, refused)
    if node.tag == _BINARY:  # decoded: its text in the file is base64
        if _PATTERN.search(value) or _PLACEHOLDER.search(value):
            return None
        return _unpinnable(node, where, to_file, value)
    line_start = _block_line(node, where, to_file)
    if line_start is None:
        start = to_file(value_span(node)[0]) + len(prefix)
    else:
        value = value.rstrip("\n")  # the line breaks after the line stay, and chomping reads them as before
        start = line_start + len(prefix)
    end = start + len(value) - len(prefix)
    written = value[len(prefix):]
    if is_templated(written):
        return Found(where.path, where.source, where.span(start, end), written, None,
                     f"templated value {written!r} cannot be resolved")
    if _PATTERN.search(written) or (node.style in (None, "", "'", '"') and _PLACEHOLDER.search(written)):
        return None
    flow = node.style in (None, "", "'", '"')  # plain or quoted
    if (line_start is None and not flow) or where.text[start:end] != written:
        return _unpinnable(node, where, to_file, written)
    try:
        written, reference = where.reference(written)
    except InvalidReference as exc:
        return Found(where.path, where.source, where.span(start, end), written, None, str(exc))
    return Found(where.path, where.source, where.span(start, end), written, reference)


def _unpinnable(node: ScalarNode, where: Located, to_file: Callable[[int], int], written: str) -> Found:
    """A value whose text in the file is not its value (escapes, `!!binary`, a folded block): judged by what
    it decodes to, found at its first character."""
    whole = where.span(to_file(node.start_mark.index), to_file(node.start_mark.index) + 1)
    problem = "written with escapes or as a block scalar; write it as a plain or quoted value to pin it"
    if is_templated(written):
        problem = f"templated value {written!r} cannot be resolved"
    return Found(where.path, where.source, whole, where.text[whole.start:whole.end], None, problem,
                 decoded=_reference_or_none(written))


def _reference_or_none(value: str) -> Reference | None:
    try:
        return parse(value)
    except InvalidReference:
        return None


def _block_line(node: ScalarNode, where: Located, to_file: Callable[[int], int]) -> int | None:
    """Where a block scalar's value starts in the file, when that value is its first content line as written.

    Only a value of one line, line breaks after it aside, with no blank at either end
    (a blank there would be part of the value): editing inside that line leaves the
    header, the indentation and the trailing line breaks, so it reads back as written.
    A folded (`>`) single line folds to itself. None for anything else.
    """
    line = str(node.value).rstrip("\n")
    if node.style not in ("|", ">") or not line or "\n" in line or line != line.strip(" \t"):
        return None
    newline = line_break(where.text)
    header_end = where.text.find(newline, to_file(node.start_mark.index))
    if header_end < 0:
        return None
    first = header_end + len(newline)  # a value that starts with no empty line starts on the next line
    line_end = where.text.find(newline, first)
    raw = where.text[first:len(where.text) if line_end < 0 else line_end].removesuffix("\r")  # a CRLF in an LF file
    indent = len(raw) - len(line)
    if not raw.endswith(line) or raw[:indent].strip(" "):
        return None
    return first + indent


def embedded(node: ScalarNode, where: Located) -> tuple[str, Callable[[int], int]] | None:
    """The YAML text held in a string scalar, and a map from its positions to the file's.

    Literal block scalars (`|`) map line by line (each content line sits at a fixed
    indentation); plain and quoted one-line strings map by offset. Anything else
    (folded, escaped) cannot be edited in place: None.
    """
    value = str(node.value)
    start = node.start_mark.index
    if node.style in (None, "", "'", '"'):
        inner = start + (1 if node.style in ("'", '"') else 0)
        if where.text[inner:inner + len(value)] != value:
            return None
        return value, lambda index: inner + index
    if node.style != "|":
        return None
    file_lines: list[int] = []  # file index of each value line's first character
    position = where.text.index("\n", start) + 1  # content starts on the line after the header
    for line in value.split("\n"):
        line_end = where.text.find("\n", position)
        line_end = len(where.text) if line_end < 0 else line_end
        raw = where.text[position:line_end].removesuffix("\r")
        indent = len(raw) - len(line) if line else len(raw)
        if line and raw[indent:] != line:
            return None
        file_lines.append(position + indent)
        position = line_end + 1
    value_starts = [0]
    for line in value.split("\n")[:-1]:
        value_starts.append(value_starts[-1] + len(line) + 1)

    def to_file(index: int) -> int:
        row = bisect.bisect_right(value_starts, index) - 1
        return file_lines[row] + index - value_starts[row]

    return value, to_file


def digest_field(mapping: MappingNode, after: Node, where: Located, key: str, *,
                 hex_only: bool = False) -> DigestField | None:
    """Where `key`'s value (a digest, or a tag written whole) goes in `mapping`; None where it cannot be edited.

    A value the mapping writes itself is replaced in place: inside its quotes, over its plain
    text (a null `~` too), or when empty after its key's colon. Otherwise a `key: ...` entry is
    added right after the `after` value: a new line at its key's indentation after the line
    the value ends on, or a new entry in a flow mapping. Nothing is written into a mapping
    merged in with `<<`: every mapping merging it would read the value.
    """
    own = next(((k, v) for k, v in mapping.value if isinstance(k, ScalarNode) and k.tag != _MERGE and k.value == key),
               None)
    if own is not None:
        return _value_field(*own, where, hex_only) if isinstance(own[1], ScalarNode) else None
    key_node = next((k for k, v in mapping.value if v is after), None)
    if key_node is None or mapping_get(mapping, key) is not None:  # a merged mapping's place
        return None
    if mapping.flow_style:
        return DigestField(after.end_mark.index, after.end_mark.index, prefix=f", {key}: ", hex_only=hex_only)
    indent = " " * key_node.start_mark.column
    newline = line_break(where.text)
    if after.end_mark.column == 0 and after.end_mark.index:  # a block scalar ends past the line breaks it ate
        insert_at = after.end_mark.index
    else:
        line_end = where.text.find(newline, after.end_mark.index)
        if line_end < 0:  # the last line of a file without a final line break
            return DigestField(len(where.text), len(where.text), prefix=f"{newline}{indent}{key}: ", hex_only=hex_only)
        insert_at = line_end + len(newline)
    return DigestField(insert_at, insert_at, prefix=f"{indent}{key}: ", suffix=newline, hex_only=hex_only)


# A key's colon with nothing after it but blanks, then a comment, a line break, the flow mapping's next entry or end.
_EMPTY_VALUE = re.compile(r"[ \t]*:(?=[ \t]*(?:[#\r\n,}]|\Z))")


def _value_field(key: ScalarNode, value: ScalarNode, where: Located, hex_only: bool) -> DigestField | None:
    """Where a one-line plain or quoted value is written over; None for a block scalar, escapes, or an explicit tag.

    An empty value's node sits where the next token starts (in a flow mapping perhaps past a
    comment, lines on): the new value goes right after the key's colon, a blank before it.
    """
    if value.style not in (None, "", "'", '"'):
        return None
    start, end = value_span(value)
    if where.text[start:end] != value.value or "!" in where.text[value.start_mark.index:start]:
        return None
    if value.style or value.value:
        return DigestField(start, end, hex_only=hex_only)
    colon = _EMPTY_VALUE.match(where.text, key.end_mark.index)
    return DigestField(colon.end(), colon.end(), prefix=" ", hex_only=hex_only) if colon else None
