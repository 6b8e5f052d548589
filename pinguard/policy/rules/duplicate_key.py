"""duplicate-key: a mapping key written twice is one of two values, and readers differ on which.

Go's YAML (Helm, kubectl, kustomize) keeps the last and drops the first without a
word; kubectl's strict field validation refuses the object; other readers keep the
first. A Pod whose `kind:` is written twice, or whose container's `image:` is,
runs one image while a reviewer, or another tool, reads the other. pinguard reads
such a document as Go does (the last value) and reports every key written again.
Keys merged in with `<<` are not written twice: a mapping's own keys override them.
Every YAML file pinguard reads for images is checked (manifests, compose files,
workflows, kustomizations, Helm values, Ray runtime_env files).

PASS: `containers: [{name: app, image: nginx:1.25@sha256:...}]`
FAIL: `kind: CustomResourceDefinition` then `kind: Pod` in the same document
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from yaml.nodes import Node

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf
from pinguard.sources.yamlnodes import Located, duplicates
from pinguard.untrusted_text import shown

ID = "duplicate-key"
TYPE: Final = "yaml"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, document: Node, where: Located) -> Iterator[Problem]:
    for duplicate in duplicates(document):
        span = where.span(duplicate.shadowed.start_mark.index, duplicate.shadowed.end_mark.index)
        yield Problem(where.path, span.line, span.column, message(duplicate.shadowed.value, span.line,
                                                                  duplicate.kept.start_mark.line + 1))


def message(key: str, first: int, last: int) -> str:
    """What is wrong with `key` written on line `first` and again on line `last`: shared with `post-render`."""
    return (f"key `{shown(key)}` written twice in one mapping (lines {first} and {last}): Go's YAML (Helm, kubectl, "
            "kustomize) keeps the last, kubectl's strict field validation rejects it; write it once")
