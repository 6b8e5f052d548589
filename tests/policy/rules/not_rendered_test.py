"""not-rendered: a values image no render showed is reported at its values line, pinned or not."""
from __future__ import annotations

from dataclasses import replace

from pinguard.lock.lockfile import Lock
from pinguard.policy.rules import not_rendered
from pinguard.policy.rules.common import Context
from pinguard.reference import parse
from pinguard.sources.base import Found
from pinguard.sources.yamlnodes import Located

TEXT = 'monitor:\n  image:\n    repository: quay.io/prometheus/node-exporter\n    tag: "v1.8.0"\n'
START = TEXT.index("quay.io")
FOUND = Found("chart/values.yaml", "helm", Located(TEXT, "chart/values.yaml", "helm").span(START, START + 32),
              "quay.io/prometheus/node-exporter", parse("quay.io/prometheus/node-exporter:v1.8.0"))
WHY = "the chart asks the cluster `.Release.IsUpgrade`, and the policy names no cluster for it"


def _messages(found: Found) -> list[tuple[int, int, str]]:
    return [(p.line, p.column, p.message) for p in not_rendered.check({}, found, Context(Lock(), "pinguard.lock"))]


def test_an_unrendered_image_is_reported_at_its_values_line() -> None:
    assert _messages(replace(FOUND, unrendered=WHY)) == [
        (3, 17, f"`quay.io/prometheus/node-exporter:v1.8.0` is set here and not verified by any render: {WHY}")]


def test_a_pinned_one_too_and_one_pinguard_cannot_read_with_why() -> None:
    digest = "@sha256:" + "a" * 64
    pinned = replace(FOUND, unrendered=WHY, reference=parse(f"quay.io/prometheus/node-exporter:v1.8.0{digest}"))
    assert "@sha256:" in _messages(pinned)[0][2]
    unread = replace(FOUND, unrendered=WHY, reference=None, problem="`tag: 1.10` is not a string to Helm")
    assert _messages(unread)[0][2].startswith("`quay.io/prometheus/node-exporter` (`tag: 1.10` is not a string")


def test_an_image_a_render_showed_is_none_of_its_business() -> None:
    assert _messages(FOUND) == []
