"""Every rule, by ID. One module per rule; its docstring is its documentation.

Each module declares `ID` (kebab-case), `TYPE` (what `check` receives),
`CONF` (option name to type: `str`, `bool`, `int`, `[str]` for a list of
strings, or a tuple of the strings allowed), `DEFAULT` (level and options) and
`check`, whose signature is its TYPE's Protocol below:

- TYPE "reference" (`ReferenceRule`): once per image reference;
- TYPE "document" (`DocumentRule`): once per Kubernetes or runtime_env document;
- TYPE "document-lock" (`DocumentLockRule`): once per Kubernetes document, with the
  lock it is checked against, in files whose text holds the rule's `MARK`;
- TYPE "lock" (`LockRule`): once per run, over every reference found.

A module may also declare `conf_problem(conf) -> str | None`: why options that pass
their types cannot work together, checked once the policy files are merged, with the rule on.

Rules yield `Problem`s; the policy stamps rule and severity, and applies
suppressions, so rules know nothing of either.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Protocol

from yaml.nodes import Node

from pinguard.findings import Problem
from pinguard.policy.rules import (
    allowed_registries,
    denied_tags,
    digest_mismatch,
    escaped_reference,
    moving_tag,
    needs_helm,
    not_locked,
    ray_efa,
    ray_same_image,
    require_provenance,
    require_sbom,
    require_signature,
    runtime_env_pins,
    stale_admission,
    tag_digest_mismatch,
    templated,
    unpinned,
    unread_digest,
    unused_lock_entry,
)
from pinguard.policy.rules.common import Conf, Context
from pinguard.sources.base import Found
from pinguard.sources.yamlnodes import Located


class Rule(Protocol):
    """What every rule module declares."""

    ID: str
    TYPE: str
    CONF: dict[str, object]
    DEFAULT: dict[str, object]


class ReferenceRule(Rule, Protocol):
    def check(self, conf: Conf, found: Found, context: Context) -> Iterator[Problem]: ...


class DocumentRule(Rule, Protocol):
    def check(self, conf: Conf, document: Node, where: Located) -> Iterator[Problem]: ...


class DocumentLockRule(Rule, Protocol):
    MARK: str  # text every document it judges holds: other files are not parsed for it

    def check(self, conf: Conf, document: Node, where: Located, context: Context) -> Iterator[Problem]: ...


class LockRule(Rule, Protocol):
    def check(self, conf: Conf, found: Sequence[Found], context: Context, lock_text: str) -> Iterator[Problem]: ...


_REFERENCE = (allowed_registries, denied_tags, digest_mismatch, escaped_reference, moving_tag, needs_helm, not_locked,
              require_provenance, require_sbom, require_signature, tag_digest_mismatch, templated, unpinned,
              unread_digest)
_DOCUMENT = (ray_efa, ray_same_image, runtime_env_pins)
_DOCUMENT_LOCK = (stale_admission,)
_LOCK = (unused_lock_entry,)

# mypy holds each module to its TYPE's Protocol here, where it still knows which module each one is.
REFERENCE_RULES: tuple[ReferenceRule, ...] = _REFERENCE
DOCUMENT_RULES: tuple[DocumentRule, ...] = _DOCUMENT
DOCUMENT_LOCK_RULES: tuple[DocumentLockRule, ...] = _DOCUMENT_LOCK
LOCK_RULES: tuple[LockRule, ...] = _LOCK

# Every rule in ID order, for what reads a rule without running it: policy options, documentation, SARIF.
RULES: dict[str, ModuleType] = {
    module.ID: module for module in sorted((*_REFERENCE, *_DOCUMENT, *_DOCUMENT_LOCK, *_LOCK),
                                           key=lambda module: module.ID)
}


def summary(rule: ModuleType) -> str:
    """The first line of a rule's docstring, without its ID: what the rule asks for."""
    first = (rule.__doc__ or "").strip().splitlines()[0]
    return first.removeprefix(f"{rule.ID}:").strip()
