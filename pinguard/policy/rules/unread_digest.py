"""unread-digest: a Helm values `digest:` is one that the chart at hand reads.

A chart that renders `{{ .repository }}:{{ .tag }}` never looks at the block's
`digest:`, so the image is still pulled by tag, however the values file reads.
`pinguard pin` pins such blocks in the tag form, which the chart does render.

PASS: `tag: 1.25.3@sha256:4c0f...` (the chart renders repository:tag)
FAIL: `digest: sha256:4c0f...` (the chart's templates never read `.digest`)
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context
from pinguard.sources.base import Found

ID = "unread-digest"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    unread = found.unread_digest
    if unread is None or found.reference is None:
        return
    if found.reference.digest:
        fix = f"it is pulled as {found.reference}, pinned in its tag: remove this field, which misleads readers"
    else:
        pin = "pinguard pin --helm PATH" if found.pin_needs_helm else "pinguard pin"
        fix = f"it is pulled as {found.reference}, by tag: run `{pin}` to pin it where the chart reads it"
    yield Problem(found.path, unread.line, unread.column,
                  f"the chart's templates do not read this digest of `{found.value}`; {fix}", found.value)
