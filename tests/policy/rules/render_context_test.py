"""render-context: the chart whose templates ask the cluster, reported at its Chart.yaml with what it asks."""
from __future__ import annotations

from pathlib import Path

from pinguard.helm.cluster_context import Asked, notice
from pinguard.lock.lockfile import Lock
from pinguard.policy.rules import render_context, templated
from pinguard.policy.rules.common import Context

CONTEXT = Context(Lock(), "pinguard.lock")


def test_the_chart_is_reported_with_what_it_asks_and_how_to_answer() -> None:
    found = notice(Path("deploy/app"), [Asked("`.Capabilities.KubeVersion`", "kube-version", "templates/a.yaml:3"),
                                        Asked("`lookup`", None, "templates/b.yaml:1")])
    (problem,) = render_context.check({}, found, CONTEXT)
    assert (problem.file, problem.line, problem.column) == ("deploy/app/Chart.yaml", 1, 1)
    assert "`.Capabilities.KubeVersion` (templates/a.yaml:3), `lookup` (templates/b.yaml:1)" in problem.message
    assert '`helm: {charts: [{chart: deploy/app, kube-version: "1.31.0"}]}`' in problem.message
    assert "`lookup` no render answers" in problem.message
    assert list(templated.check({}, found, CONTEXT)) == []  # told once, by this rule
