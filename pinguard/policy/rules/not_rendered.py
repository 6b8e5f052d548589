"""not-rendered: every image a chart's values set is one a render of the chart showed.

Where a chart's templates ask the cluster (`.Capabilities.APIVersions`,
`.Capabilities.KubeVersion`, `.Release.IsUpgrade`, `lookup`) and the policy names
no cluster for it, a bare `helm template` answers with defaults: an image behind
such a question is not rendered, so nothing pinguard judged is what runs. Such an
image is read from its values line as without Helm (every other rule judges it
there too) and reported here, pinned or not: no render verified that the chart
runs it as its values say. Name the cluster in the policy (`helm.charts[]`:
`kube-version`, `api-versions`, `namespace`, `release`, `is-upgrade`) and Helm
renders it.

`lookup` no render answers (`helm template` answers it with nothing): in a chart
that calls it, such images are reported whether or not the policy names the
cluster; say what you checked with `# pinguard: ignore[not-rendered] REASON`.

Only then: where the templates ask nothing, or the policy names the cluster, the
renders are what the cluster gets, and a values image none shows is one the chart
does not deploy with these values (`enabled: false`), which pinguard leaves out.

PASS: the policy names `api-versions: [monitoring.coreos.com/v1]` for the chart
FAIL: `{{ if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}` gates an image; the policy names no cluster
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at
from pinguard.sources.base import Found

ID = "not-rendered"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    if found.unrendered is not None:
        image = f"`{found.reference}`" if found.reference is not None else f"`{found.value}` ({found.problem})"
        yield at(found, f"{image} is set here and not verified by any render: {found.unrendered}")
