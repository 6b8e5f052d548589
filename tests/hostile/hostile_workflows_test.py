"""Hostile GitHub workflows: matrices cost time linear in the workflow, aliases may not multiply it, GitHub's
cap of 256 runs a matrix is said, and a workflow pinguard cannot read is an error, never passed over.

A matrix once cost runs x include entries x jobs x expressions, and YAML aliases multiplied
each factor: 16.5 KB of workflow took 40 s. A workflow that did not parse, or nested deeper
than libyaml reads, was read line by line as a template because `${{` looked like one: its
`container:` images went unread and `check` passed.
"""
from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.sources import workflow
from pinguard.sources.base import Unreadable
from testing.costs import cpu_seconds, peak_memory

PATH = ".github/workflows/ci.yml"
VALUES = ", ".join(f"'v:{number}'" for number in range(16))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    return tmp_path


def _check(text: str) -> tuple[int, str, str]:
    Path(PATH).write_text(text)
    out, err = io.StringIO(), io.StringIO()
    status = main(["check", PATH], env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _aliased(entries: int) -> str:
    """256 runs, `entries` include and exclude entries, `entries` jobs: every one an alias, a few bytes each."""
    matrix = f"{{a: [{VALUES}], b: [{VALUES}], include: *entries, exclude: *entries}}"
    return ("on: push\nentry: &entry {zz: q}\nentries: &entries [" + ", ".join(["*entry"] * entries) + "]\n"
            f"job: &job\n  strategy: {{matrix: {matrix}}}\n"
            "  container: ${{ matrix.db }}\n  services: {s: {image: '${{ matrix.a }}'}}\n"
            "jobs:\n" + "".join(f"  j{number}: *job\n" for number in range(entries)))


def _written(entries: int) -> str:
    """256 runs, `entries` include entries and as many steps taking matrix values, all written out."""
    included = "".join(f"          - {{a: 'v:{n % 16}', db{n}: 'mysql:{n}'}}\n" for n in range(entries))
    steps = "".join(f"      - uses: docker/setup-qemu-action@v3\n        with: {{image: '${{{{ matrix.db{n} }}}}'}}\n"
                    for n in range(entries))
    return ("on: push\njobs:\n  j:\n    strategy:\n      matrix:\n"
            f"        a: [{VALUES}]\n        b: [{VALUES}]\n        include:\n{included}"
            f"    container: ${{{{ matrix.a }}}}\n    steps:\n{steps}")


def _found(text: str) -> Callable[[], object]:
    def read() -> object:
        try:
            return workflow.find(PATH, text).found
        except Unreadable as exc:
            return exc
    return read


@pytest.mark.parametrize("make", [_aliased, _written], ids=["aliased", "written-out"])
def test_matrices_cost_time_and_memory_linear_in_the_workflow(make: Callable[[int], str]) -> None:
    small, large = make(600), make(2_400)
    assert cpu_seconds(_found(large)) < 8 * max(cpu_seconds(_found(small)), 0.05)  # 4x the text; quadratic would be 16x
    assert peak_memory(_found(small))[1] < 200 * len(small)


def test_a_written_out_matrix_is_read_whole() -> None:
    found = workflow.find(PATH, _written(300)).found
    assert {f.value for f in found if f.reference is not None} >= {f"mysql:{number}" for number in range(300)}


def test_aliases_that_multiply_a_workflow_are_refused_in_one_line(repo: Path) -> None:
    status, out, err = _check(_aliased(2_000))  # about 20 KB
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{PATH}:" in err and "aliases or matrices repeat more than pinguard reads" in err


@pytest.mark.parametrize("alias", ["&loop [*loop]", "&loop {a: *loop}"])
def test_an_alias_holding_itself_is_refused(alias: str, repo: Path) -> None:
    status, _, err = _check(f"on: push\njobs:\n  a:\n    container: evil.example/x:latest\n    env: {alias}\n")
    assert status == 2 and "aliases or matrices repeat more than pinguard reads" in err


@pytest.mark.parametrize(("matrix", "runs"), [
    (f"{{a: [{VALUES}], b: [{VALUES}], db: ['mysql:8', 'mysql:9']}}", 512),
    ("{include: [" + ", ".join(f"{{db: 'mysql:{number}'}}" for number in range(300)) + "]}", 300),
    (f"{{a: [{VALUES}], b: [{VALUES}], include: [{{db: 'mysql:9', a: other}}]}}", 257),
], ids=["own-keys", "include-only", "include-adds-one"])
def test_a_matrix_beyond_githubs_256_runs_is_said(matrix: str, runs: int, repo: Path) -> None:
    _, out, _ = _check(f"on: push\njobs:\n  a:\n    strategy: {{matrix: {matrix}}}\n"
                       "    container: ${{ matrix.db }}\n")
    assert f"the matrix makes {runs} runs, more than the 256 GitHub starts" in out


@pytest.mark.parametrize("broken", [
    "extra: " + "[" * 5_000 + "]" * 5_000,  # deeper than libyaml reads
    "extra: {a: b\n",  # not YAML at all
], ids=["nested-too-deep", "invalid"])
def test_a_workflow_that_cannot_be_read_is_an_error_not_a_template(broken: str, repo: Path) -> None:
    status, out, err = _check("on: push\njobs:\n  a:\n    container: evil.example/x:latest\n"
                              "    steps: [{run: 'echo ${{ github.sha }} ${HOME}'}]\n" + broken)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and f"{PATH}:" in err and "YAML" in err


def test_a_workflow_templated_by_another_tool_is_still_read_as_a_template(repo: Path) -> None:
    status, out, _ = _check("on: push\njobs:\n  a:\n    container:\n      image: {{ cookiecutter.image }}\n"
                            "    steps: [{run: 'echo ${{ github.sha }}'}]\n  b: {\n")
    assert status == 0 and "templated value" in out
