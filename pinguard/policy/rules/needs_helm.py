"""needs-helm: every Helm values image block is one pinguard can pin without guessing.

Read without Helm, a values file says what a chart renders only for the shapes
pinguard models (`registry`/`repository`/`tag`, `name`/`tag`, ...). A block with a
flag that changes the rendered image (`distroless: true` renders `...-distroless`),
`version` beside `repository`, a registry set for every image, a tag Helm reads as
a number (`tag: 1.10` is 1.1), or an empty tag its chart defaults some other way,
renders an image pinguard would have to guess: it is neither locked nor pinned.
Let Helm render the chart (`--helm PATH`, or helm on PATH), or pin the rendered
manifests at deploy time with `pinguard post-render`.

PASS: `image: {repository: quay.io/prometheus/prometheus, tag: v3.1.0}`
FAIL: `image: {repository: quay.io/prometheus/prometheus, tag: v3.1.0, distroless: true}`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at
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
