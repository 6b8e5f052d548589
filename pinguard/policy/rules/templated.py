"""templated: a value pinguard cannot check because it is filled in later.

`${IMAGE}`, `{{ .Values.image }}`, `${{ matrix.image }}` or a Dockerfile build
argument without a default name no image until something renders them, so
nothing can be pinned or verified here. Pin the value where it is defined, or
suppress the finding with a reason.

PASS: `image: nginx:1.25@sha256:...`
FAIL: `image: ${IMAGE}`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at
from pinguard.sources.base import Found

ID = "templated"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "warning"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    # A decoded reference is `escaped-reference`'s, a block only Helm (or kustomize) can read `needs-helm`'s
    # (or `needs-kustomize`'s), a chart's questions to the cluster `render-context`'s.
    owned = found.decoded is not None or found.needs_helm or found.needs_kustomize or found.render_context is not None
    if found.reference is None and not owned:
        yield at(found, f"cannot be checked: {found.problem}")
