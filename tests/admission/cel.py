"""CEL as the API server runs it, on cel-python: the Kubernetes library, RE2's `matches`, cel-go's cost.

Where the API server's CEL and cel-python differ, this is the API server's:

- the Kubernetes CEL library the policies use (`KUBERNETES_LIBRARY`): cel-go's
  extended strings (`charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`,
  `replace`, `split`, `substring`, `join`) with its published semantics, errors
  included (indices are code points; `indexOf` and `lastIndexOf` fail on an offset
  outside the string, which on an empty string is every offset), and the lists
  library's `sum`;
- `matches` is RE2's: `$` is the end of the text, never a line break before it;
- `&&` and `||` evaluate their right side only when the left does not decide, as
  cel-go does (the value is the same; the cost is not);
- the cost: `Meter` counts what cel-go's runtime cost tracker counts
  (interpreter/runtimecost.go, and the Kubernetes library's CallCost): 1 for an
  identifier, a field selection, an index or a call; string functions by the length of
  their strings; `in` on a list by its size and on a map 1; list and map literals
  10 and 30; each step of a comprehension as cel-go expands the macro (`map` adds a
  list of one to its result: 12, ...). An expression past `PER_CALL_LIMIT` is an error,
  as on the server.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import CELEvalError, Evaluator

Tree = lark.Tree[Any]

PER_CALL_LIMIT = 1_000_000  # k8s.io/apiserver/pkg/apis/cel: PerCallLimit
_TRAVERSAL = 0.1  # common.StringTraversalCostFactor
_REGEX = 0.25  # common.RegexStringLengthCostFactor


# --- the Kubernetes CEL library ---

def _error(message: str) -> CELEvalError:
    return CELEvalError(message)


def _char_at(text: str, index: int) -> Any:
    if index < 0 or index > len(text):
        return _error(f"index out of range: {index}")
    return celtypes.StringType(text[index:index + 1])


def _index_of(text: str, sub: str, offset: int = 0) -> Any:
    if not sub:
        return celtypes.IntType(offset)
    if offset < 0 or offset >= len(text):
        return _error(f"index out of range: {offset}")
    return celtypes.IntType(text.find(sub, offset))


def _last_index_of(text: str, sub: str, offset: int | None = None) -> Any:
    if offset is None:
        if not sub:
            return celtypes.IntType(len(text))
        offset = len(text) - 1
    if not sub:
        return celtypes.IntType(offset)
    if offset < 0 or offset >= len(text):
        return _error(f"index out of range: {offset}")
    start = min(offset, len(text) - len(sub))
    return celtypes.IntType(text.rfind(sub, 0, start + len(sub)) if start >= 0 else -1)


def _ascii(convert: Callable[[str], str]) -> Callable[[str], Any]:
    return lambda text: celtypes.StringType("".join(convert(c) if c < "\x80" else c for c in text))


def _replace(text: str, old: str, new: str, limit: int = -1) -> Any:
    return celtypes.StringType(text.replace(old, new, limit))  # Go's strings.Replace: "" matches between runes


def _split(text: str, separator: str, limit: int = -1) -> Any:
    """Go's strings.SplitN: no limit below 0, nothing for 0, the rest in the last part; "" splits into runes."""
    if limit == 0:
        return celtypes.ListType()
    if separator:
        parts = text.split(separator, limit - 1 if limit > 0 else -1)
    else:
        parts = list(text)
        if 0 < limit < len(parts):
            parts = [*parts[:limit - 1], "".join(parts[limit - 1:])]
    return celtypes.ListType(celtypes.StringType(part) for part in parts)


def _substring(text: str, start: int, end: int | None = None) -> Any:
    if end is not None and start > end:
        return _error(f"invalid substring range. start: {start}, end: {end}")
    for index in (start, end):
        if index is not None and not 0 <= index <= len(text):
            return _error(f"index out of range: {index}")
    return celtypes.StringType(text[start:end])


def _join(items: Sequence[Any], separator: str = "") -> Any:
    if not all(isinstance(item, str) for item in items):
        return _error("join: not a list of strings")
    return celtypes.StringType(separator.join(items))


def _sum(items: Sequence[Any]) -> Any:
    if not all(isinstance(item, celtypes.IntType) for item in items):
        return _error("sum: not a list of ints")
    return celtypes.IntType(sum(items))


def _matches(text: str, pattern: str) -> Any:
    """RE2's partial match: a `$` outside a class is the end of the text (Python's `$` also matches before a final
    line break)."""
    translated = re.sub(r"(\\.|\[(?:\\.|[^\]])*\])|\$", lambda m: m[1] or r"\Z", pattern)
    return celtypes.BoolType(re.search(translated, text) is not None)


def _typed(function: Callable[..., Any]) -> Callable[..., Any]:
    """A library function that refuses arguments of another type with an error, as an overload would."""
    def call(*args: Any) -> Any:
        if any(isinstance(arg, CELEvalError) for arg in args):
            return next(arg for arg in args if isinstance(arg, CELEvalError))
        try:
            return function(*(int(a) if isinstance(a, celtypes.IntType) else a for a in args))
        except (TypeError, AttributeError) as exc:
            return _error(f"no such overload: {exc}")
    return call


KUBERNETES_LIBRARY: dict[str, Callable[..., Any]] = {name: _typed(function) for name, function in {
    "charAt": _char_at, "indexOf": _index_of, "lastIndexOf": _last_index_of,
    "lowerAscii": _ascii(str.lower), "upperAscii": _ascii(str.upper), "replace": _replace, "split": _split,
    "substring": _substring, "join": _join, "sum": _sum, "matches": _matches,
}.items()}


# --- the cost ---

@dataclass
class Meter:
    """cel-go's runtime cost of what was evaluated."""

    cost: int = 0

    def add(self, cost: int | float) -> None:
        self.cost += math.ceil(cost)


def _size(value: Any) -> int:
    """cel-go's actualSize: a string's code points, a list's or map's items; 1 for anything else."""
    return len(value) if isinstance(value, (str, bytes, list, dict)) else 1


def _traversal(value: Any) -> int:
    """The Kubernetes library's traversalCost (truncated, not rounded up)."""
    if isinstance(value, str):
        return int(len(value.encode()) * _TRAVERSAL)
    if isinstance(value, list):
        return sum(_traversal(item) for item in value)
    return 1


def _call_cost(name: str, args: Sequence[Any], result: Any) -> float:
    text = args[0] if args else ""
    match name:
        case "contains":
            return math.ceil(_size(text) * _TRAVERSAL) * math.ceil(_size(args[1]) * _TRAVERSAL)
        case "startsWith" | "endsWith" | "substring" | "lowerAscii" | "upperAscii" | "trim":
            return _size(text) * _TRAVERSAL
        case "matches":
            return math.ceil((1 + _size(text)) * _TRAVERSAL) * math.ceil(_size(args[1]) * _REGEX)
        case "replace" | "split":
            return _size(text) * 2 * _TRAVERSAL
        case "join":
            return _size(result) * 2 * _TRAVERSAL
        case "indexOf" | "lastIndexOf" | "sum":
            return _traversal(text)
    return 1


class _Metered(Evaluator):
    """cel-python's evaluator, charging each step to a Meter as cel-go does, and short-circuiting as cel-go does."""

    def __init__(self, ast: Tree, activation: Any, meter: Meter) -> None:
        super().__init__(ast, activation)
        self.meter = meter

    def sub_evaluator(self, ast: Tree) -> Evaluator:
        return _Metered(ast, self.activation, self.meter)

    def primary(self, tree: Tree) -> Any:
        child = cast(Tree, tree.children[0])
        if child.data in ("ident", "ident_arg"):
            name = cast(lark.Token, child.children[0]).value
            self.meter.add(0 if name == "dyn" else 1)
        elif child.data == "list_lit":
            self.meter.add(10)
        elif child.data == "map_lit":
            self.meter.add(30)
        return super().primary(tree)

    def member_dot(self, tree: Tree) -> Any:
        self.meter.add(1)
        return super().member_dot(tree)

    def member_index(self, tree: Tree) -> Any:
        self.meter.add(1)
        return super().member_index(tree)

    def member_dot_arg(self, tree: Tree) -> Any:
        name = cast(lark.Token, tree.children[1]).value
        if name in ("map", "filter", "all", "exists"):
            return self._comprehension(tree, name)
        target, _, *rest = self.visit_children(tree)
        args = list(rest[0]) if rest else []
        result = self.method_eval(target, cast(lark.Token, tree.children[1]), args)
        self.meter.add(_call_cost(name, [target, *args], result))
        return result

    def _comprehension(self, tree: Tree, name: str) -> Any:
        """A macro as cel-go expands it: an accumulator, a loop condition, a step, the result."""
        target = self.visit(cast(Tree, tree.children[0]))
        if isinstance(target, CELEvalError):
            return target
        body = self.build_ss_macro_eval(tree)
        items = list(target)
        if name in ("map", "filter"):
            self.meter.add(10 + 1)  # the accumulator `[]`, the result
            found: list[Any] = []
            for item in items:
                value = body(item)
                if isinstance(value, CELEvalError):
                    return value
                kept = name == "map" or bool(value)
                self.meter.add(12 if kept else 1)
                if kept:
                    found.append(value if name == "map" else item)
            return celtypes.ListType(found)
        decisive = name == "exists"  # what stops the loop
        self.meter.add(1)
        error: Any = None
        for item in items:
            self.meter.add(3 if name == "all" else 4)  # @not_strictly_false(...) and the step's `&&` or `||`
            value = body(item)
            if isinstance(value, CELEvalError):
                error = error or value
            elif bool(value) == decisive:
                return celtypes.BoolType(decisive)
        return error or celtypes.BoolType(not decisive)

    def conditionaland(self, tree: Tree) -> Any:
        return self._logical(tree, decisive=False)

    def conditionalor(self, tree: Tree) -> Any:
        return self._logical(tree, decisive=True)

    def _logical(self, tree: Tree, decisive: bool) -> Any:
        if len(tree.children) == 1:
            return self.visit(cast(Tree, tree.children[0]))
        left = self.visit(cast(Tree, tree.children[0]))
        if isinstance(left, celtypes.BoolType) and bool(left) == decisive:
            return left
        right = self.visit(cast(Tree, tree.children[1]))
        combine = celtypes.logical_or if decisive else celtypes.logical_and
        try:
            return combine(left, right)
        except TypeError:
            return _error(f"no such overload: {'||' if decisive else '&&'}")

    def relation(self, tree: Tree) -> Any:
        if len(tree.children) == 2:
            (left, *_), right = self.visit_children(tree)
            operator = cast(Tree, tree.children[0]).data
            if operator == "relation_in":
                self.meter.add(_size(right) if isinstance(right, list) else 1)
            else:
                self.meter.add(min(_size(left), _size(right)) * _TRAVERSAL)
            return self._apply(operator, left, right)
        return super().relation(tree)

    def addition(self, tree: Tree) -> Any:
        if len(tree.children) == 2:
            (left, *_), right = self.visit_children(tree)
            operator = cast(Tree, tree.children[0]).data
            strings = isinstance(left, str) and isinstance(right, str)
            self.meter.add((_size(left) + _size(right)) * _TRAVERSAL if strings else 1)
            return self._apply(operator, left, right)
        return super().addition(tree)

    def multiplication(self, tree: Tree) -> Any:
        if len(tree.children) == 2:
            self.meter.add(1)
        return super().multiplication(tree)

    def unary(self, tree: Tree) -> Any:
        if len(tree.children) == 2:
            self.meter.add(1)
        return super().unary(tree)

    def _apply(self, operator: str, left: Any, right: Any) -> Any:
        for value in (left, right):
            if isinstance(value, CELEvalError):
                return value
        function = self.activation.resolve_function(_OPERATORS[operator])
        try:
            return function(left, right)
        except (TypeError, ValueError) as exc:
            return _error(f"no such overload: {operator}: {exc}")


_OPERATORS = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_ge": "_>=_", "relation_gt": "_>_",
              "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "_in_", "addition_add": "_+_",
              "addition_sub": "_-_"}
ENV = celpy.Environment()


@cache
def _compiled(expression: str) -> tuple[Tree, celpy.Runner]:
    ast = ENV.compile(expression)
    return ast, ENV.program(ast, functions=KUBERNETES_LIBRARY)


def evaluate(expression: str, activation: Mapping[str, Any], meter: Meter | None = None) -> Any:
    """One CEL expression; an error is raised, as a failed expression fails the request."""
    ast, runner = _compiled(expression)
    meter = meter or Meter()
    result = _Metered(ast, runner.new_activation(), meter).evaluate(dict(activation))
    if meter.cost > PER_CALL_LIMIT:
        raise CELEvalError(f"operation cancelled: actual cost limit exceeded ({meter.cost})")
    return result


