"""The harness's CEL against the API server's: the Kubernetes library's published examples, RE2, cel-go's cost.

Each example of cel-go's ext/strings.go documentation gives what it documents, errors
included; a cost is what cel-go's runtime cost tracker and the Kubernetes library's
CallCost charge.
"""
from __future__ import annotations

from typing import Any

import celpy
import pytest
from celpy.evaluation import CELEvalError

from tests.admission.cel import PER_CALL_LIMIT, Meter, evaluate


def run(expression: str, **variables: Any) -> Any:
    return evaluate(expression, {name: celpy.json_to_cel(value) for name, value in variables.items()})


@pytest.mark.parametrize(("expression", "expected"), [
    ("'hello'.charAt(4)", "o"), ("'hello'.charAt(5)", ""),
    ("'hello mellow'.indexOf('')", 0), ("'hello mellow'.indexOf('ello')", 1), ("'hello mellow'.indexOf('jello')", -1),
    ("'hello mellow'.indexOf('', 2)", 2), ("'hello mellow'.indexOf('ello', 2)", 7),
    ("'hello mellow'.lastIndexOf('')", 12), ("'hello mellow'.lastIndexOf('ello')", 7),
    ("'hello mellow'.lastIndexOf('jello')", -1), ("'hello mellow'.lastIndexOf('ello', 6)", 1),
    ("'TacoCat'.lowerAscii()", "tacocat"), ("'TacoCÆt Xii'.lowerAscii()", "tacocÆt xii"),
    ("'TacoCat'.upperAscii()", "TACOCAT"), ("'TacoCÆt Xii'.upperAscii()", "TACOCÆT XII"),
    ("'hello hello'.replace('he', 'we')", "wello wello"), ("'hello hello'.replace('he', 'we', -1)", "wello wello"),
    ("'hello hello'.replace('he', 'we', 1)", "wello hello"), ("'hello hello'.replace('he', 'we', 0)", "hello hello"),
    ("'hello hello hello'.split(' ')", ["hello", "hello", "hello"]), ("'hello hello hello'.split(' ', 0)", []),
    ("'hello hello hello'.split(' ', 1)", ["hello hello hello"]),
    ("'hello hello hello'.split(' ', 2)", ["hello", "hello hello"]),
    ("'hello hello hello'.split(' ', -1)", ["hello", "hello", "hello"]),
    ("'abc'.split('')", ["a", "b", "c"]), ("''.split('')", []), ("''.split('@')", [""]), ("'aé'.split('')", ["a", "é"]),
    ("'tacocat'.substring(4)", "cat"), ("'tacocat'.substring(0, 4)", "taco"), ("'aéb'.substring(1, 2)", "é"),
    ("['hello', 'mellow'].join()", "hellomellow"), ("['hello', 'mellow'].join(' ')", "hello mellow"),
    ("[].join()", ""), ("[].join('/')", ""), ("[1, 2, 3].sum()", 6), ("[].sum()", 0),
])
def test_the_kubernetes_library_as_documented(expression: str, expected: Any) -> None:
    assert run(expression) == expected


@pytest.mark.parametrize("expression", [
    "'hello'.charAt(-1)", "'hello mellow'.indexOf('ello', 20)", "'hello mellow'.lastIndexOf('ello', -1)",
    "'tacocat'.substring(-1)", "'tacocat'.substring(2, 1)", "'tacocat'.substring(0, 8)",
    # On an empty string every offset is out of range: `indexOf` and `lastIndexOf` of a non-empty string fail.
    "''.indexOf('@')", "''.lastIndexOf('@')", "[1, 'a'].join()",
])
def test_what_the_kubernetes_library_refuses_is_an_error(expression: str) -> None:
    with pytest.raises(CELEvalError):
        run(expression)


@pytest.mark.parametrize(("text", "pattern", "expected"), [
    ("a@sha256:" + "0" * 64, "^[^@]+@sha256:[0-9a-f]{64}$", True),
    ("a@sha256:" + "0" * 64 + "\n", "^[^@]+@sha256:[0-9a-f]{64}$", False),  # RE2's `$` is the end, Python's is not
    ("x$y", r"x\$y", True), ("$", "[$]", True), ("ab", "b", True), ("ab", "^b", False),
])
def test_matches_is_re2s_partial_match(text: str, pattern: str, expected: bool) -> None:
    assert run("text.matches(pattern)", text=text, pattern=pattern) == expected


def cost(expression: str, **variables: Any) -> int:
    meter = Meter()
    evaluate(expression, {name: celpy.json_to_cel(value) for name, value in variables.items()}, meter)
    return meter.cost


def test_a_map_key_costs_the_same_whatever_the_size_of_the_map_and_a_list_by_its_size() -> None:
    small, large = {f"k{i}": "" for i in range(10)}, {f"k{i}": "" for i in range(10_000)}
    assert cost("'k1' in m", m=small) == cost("'k1' in m", m=large) == 2  # the identifier and the lookup
    assert cost("'k1' in l", l=list(small)) == 1 + 10 and cost("'k1' in l", l=list(large)) == 1 + 10_000


def test_string_functions_cost_by_the_length_of_their_strings() -> None:
    assert cost("s.substring(1)", s="x" * 100) == 1 + 10  # the identifier, then a tenth of its length
    assert cost("s.split('/')", s="x" * 100) == 1 + 20  # and a result to build: two tenths
    assert cost("s.matches('^[a-z]+$')", s="x" * 99) == 1 + 10 * 2  # (1 + 99) / 10 times the pattern's length / 4
    assert cost("s + t", s="x" * 50, t="y" * 50) == 2 + 10


def test_a_comprehension_costs_each_step_as_cel_go_expands_it() -> None:
    assert cost("l.map(x, x)", l=[1] * 10) == 1 + 11 + 10 * (12 + 1)  # the list, `[]` and the result, each step
    # The loop's condition and step, then the body: the identifier and `==`.
    assert cost("l.all(x, x == 1)", l=[1] * 10) == 1 + 1 + 10 * (3 + 2)
    assert cost("l.exists(x, x == 1)", l=[1] * 10) == 1 + 1 + 4 + 2  # it stops at the first that holds


def test_and_and_or_skip_the_right_side_when_the_left_decides() -> None:
    assert cost("false && l.all(x, x == 1)", l=[1] * 100) == 0
    assert not run("false && 1 / 0 == 1")
    with pytest.raises(CELEvalError):
        run("true && 1 / 0 == 1")


def test_an_expression_past_the_per_call_limit_is_an_error() -> None:
    with pytest.raises(CELEvalError, match="cost limit exceeded"):
        run("s.matches('^(?:abcdefghij|klmnopqrst|uvwxyz0123|456789)+$')", s="x" * 1_000_000)
    assert PER_CALL_LIMIT == 1_000_000


def test_a_scan_of_a_map_s_keys_costs_by_their_number_and_a_lookup_does_not() -> None:
    """How a lock grew the cost of a policy that scanned the params' keys: the lookup that replaced the scan."""
    image = "registry.example.com/app@sha256:" + "f" * 64
    scan = "m.exists(k, i.endsWith('@sha256:' + k))"
    lookup = "i.substring(i.size() - 64) in m"
    sizes = {n: {f"{j:064x}": "" for j in range(n)} for n in (100, 1000)}
    assert cost(scan, i=image, m=sizes[1000]) > 9 * cost(scan, i=image, m=sizes[100])
    assert cost(lookup, i=image, m=sizes[1000]) == cost(lookup, i=image, m=sizes[100]) < 20
