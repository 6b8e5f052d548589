"""render-context: a chart whose templates ask the cluster is rendered as the policy says the cluster answers.

`helm template` answers `.Capabilities.APIVersions` and `.Capabilities.KubeVersion`
with its own defaults, `.Release.IsUpgrade` with false and `lookup` with nothing.
A chart that asks them renders, without the cluster named, what no cluster may run:
an image behind `{{ if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}`
is missing (`not-rendered` reports it). Reported at the chart's Chart.yaml, naming
what its templates ask and where; name the cluster in the policy:

    helm:
      charts:
        - chart: deploy/app
          kube-version: "1.31.0"
          api-versions: [monitoring.coreos.com/v1]
          namespace: monitoring
          release: app
          is-upgrade: false

PASS: a chart whose templates ask nothing of the cluster, or one the policy names the cluster for
FAIL: `{{ if semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version }}` in a chart the policy names no cluster for
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at
from pinguard.sources.base import Found

ID = "render-context"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "warning"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    if found.render_context is not None:
        yield at(found, found.render_context)
