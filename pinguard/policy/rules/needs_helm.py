"""needs-helm: every Helm values image block is one pinguard can pin without guessing.

Read without Helm, a values file says what a chart renders only for the shapes
pinguard models (`registry`/`repository`/`tag`, `name`/`tag`, ...). A block with a
flag that changes the rendered image (`distroless: true` renders `...-distroless`),
`version` beside `repository`, a registry set for every image, a tag Helm reads as
a number (`tag: 1.10` is 1.1), or an empty tag its chart defaults some other way,
renders an image pinguard would have to guess: it is neither locked nor pinned.
Let Helm render the chart (`--helm PATH`, or helm on PATH), or pin the rendered
manifests at deploy time with `pinguard post-render`.

Nor does pinguard write into a chart's values without Helm (a values file with a
Chart.yaml above it, or one the policy's `helm.charts` deploys), whatever their
shape: a tag the chart also compares (`semverCompare`) or writes into a label, a
registry another values file sets, would break or misdirect a pin that only a
render can confirm. Each image there that `pin` would write (not yet pinned to its
locked digest) is reported; `pin` refuses to run until helm is at hand. Values
files of no chart are pinned as read.

PASS: `image: {repository: quay.io/prometheus/prometheus, tag: v3.1.0}` (in no chart)
PASS: `image: {repository: nginx, tag: "1.25@sha256:..."}` in a chart, the locked digest, no helm
FAIL: `image: {repository: quay.io/prometheus/prometheus, tag: v3.1.0, distroless: true}`
FAIL: `image: {repository: nginx, tag: "1.25"}` in a chart (a Chart.yaml above it), no helm
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.pin.plan import NEEDS_HELM, pinning_writes
from pinguard.policy.rules.common import Conf, Context, at, spelled
from pinguard.sources.base import Found

ID = "needs-helm"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    if found.needs_helm:
        yield at(found, f"only Helm can say what `{found.value}` renders ({found.problem}): let Helm render the "
                        "chart to pin it (`--helm PATH`, or helm on PATH), or pin it at deploy time with "
                        "`pinguard post-render`")
    elif found.pin_needs_helm and pinning_writes(found, context.lock):
        yield at(found, f"{spelled(found)} is not pinned to its locked digest, and {NEEDS_HELM} (only a render "
                        "tells what a write into a chart does); or pin it at deploy time with `pinguard post-render`")
