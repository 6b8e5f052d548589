"""needs-kustomize: every kustomization is one pinguard judges by its build, or reads whole without one.

Read without kustomize, a kustomization says which images it renders only
through its `images:` entries. A strategic merge or JSON 6902 patch (inline
or in a file), `replacements`, `components`, generators and transformers
change images that only `kubectl kustomize` shows, so such a kustomization is
never called clean: let kustomize build it (`--kustomize PATH`, or kubectl or
kustomize on PATH). A remote resource (a URL, a git repository) is reported
whether kustomize is at hand or not: pinguard never fetches one, so vendor it.

PASS: `images: [{name: nginx, newTag: "1.27"}]`
FAIL: `patches: [{path: set-image.yaml}]`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at
from pinguard.sources.base import Found

ID = "needs-kustomize"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    if found.needs_kustomize:
        # The problem carries its own advice: build it, or (a remote resource, never fetched) vendor it.
        yield at(found, f"only kustomize can say what this kustomization renders: {found.problem}")
