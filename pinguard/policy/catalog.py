"""Every rule: by ID for what reads a rule's settings, and by TYPE for running them.

The rule modules are named once, below; each TYPE's list is drawn from their `TYPE`s.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import ModuleType
from typing import Literal, Protocol

from yaml.nodes import Node

from pinguard.findings import Problem
from pinguard.policy.model import Rule
from pinguard.policy.rules import (
    action_mismatch,
    allowed_registries,
    denied_tags,
    digest_mismatch,
    duplicate_key,
    escaped_reference,
    moving_tag,
    needs_helm,
    needs_kustomize,
    not_locked,
    not_rendered,
    ray_efa,
    ray_same_image,
    render_context,
    require_provenance,
    require_sbom,
    require_signature,
    runtime_env_pins,
    stale_admission,
    tag_digest_mismatch,
    templated,
    unpinned,
    unpinned_action,
    unread_digest,
    unused_lock_entry,
)
from pinguard.policy.rules.common import Conf, Context
from pinguard.sources.base import ActionUse, Found
from pinguard.sources.yamlnodes import Located


class ReferenceRule(Rule, Protocol):
    @property
    def TYPE(self) -> Literal["reference"]: ...

    def check(self, conf: Conf, found: Found, context: Context) -> Iterator[Problem]: ...


class ActionRule(Rule, Protocol):
    @property
    def TYPE(self) -> Literal["action"]: ...

    def check(self, conf: Conf, use: ActionUse, context: Context) -> Iterator[Problem]: ...


class DocumentRule(Rule, Protocol):
    @property
    def TYPE(self) -> Literal["document"]: ...

    def check(self, conf: Conf, document: Node, where: Located) -> Iterator[Problem]: ...


class DocumentLockRule(Rule, Protocol):
    MARK: str  # text every document it judges holds once decoded: files that cannot hold it (`may_hold`) are not parsed

    @property
    def TYPE(self) -> Literal["document-lock"]: ...

    def check(self, conf: Conf, document: Node, where: Located, context: Context) -> Iterator[Problem]: ...


class YamlRule(Rule, Protocol):
    """Judges every YAML document a source read, whatever its kind."""

    @property
    def TYPE(self) -> Literal["yaml"]: ...

    def check(self, conf: Conf, document: Node, where: Located) -> Iterator[Problem]: ...


class LockRule(Rule, Protocol):
    @property
    def TYPE(self) -> Literal["lock"]: ...

    def check(self, conf: Conf, found: Sequence[Found], context: Context, lock_text: str) -> Iterator[Problem]: ...


_MODULES = (action_mismatch, allowed_registries, denied_tags, digest_mismatch, duplicate_key, escaped_reference,
            moving_tag, needs_helm, needs_kustomize, not_locked, not_rendered, ray_efa, ray_same_image, render_context,
            require_provenance, require_sbom, require_signature, runtime_env_pins, stale_admission,
            tag_digest_mismatch, templated, unpinned, unpinned_action, unread_digest, unused_lock_entry)

# mypy holds each module to the Protocol its TYPE names, and narrows each list below by TYPE.
_TYPED: tuple[ReferenceRule | ActionRule | DocumentRule | DocumentLockRule | YamlRule | LockRule, ...] = _MODULES

REFERENCE_RULES: tuple[ReferenceRule, ...] = tuple(rule for rule in _TYPED if rule.TYPE == "reference")
ACTION_RULES: tuple[ActionRule, ...] = tuple(rule for rule in _TYPED if rule.TYPE == "action")
DOCUMENT_RULES: tuple[DocumentRule, ...] = tuple(rule for rule in _TYPED if rule.TYPE == "document")
DOCUMENT_LOCK_RULES: tuple[DocumentLockRule, ...] = tuple(rule for rule in _TYPED if rule.TYPE == "document-lock")
LOCK_RULES: tuple[LockRule, ...] = tuple(rule for rule in _TYPED if rule.TYPE == "lock")
YAML_RULES: tuple[YamlRule, ...] = tuple(rule for rule in _TYPED if rule.TYPE == "yaml")

# Every rule in ID order, for what reads a rule without running it: policy options, documentation, SARIF.
RULES: Mapping[str, ModuleType] = {module.ID: module for module in sorted(_MODULES, key=lambda module: module.ID)}


def summary(rule: ModuleType) -> str:
    """The first line of a rule's docstring, without its ID: what the rule asks for."""
    first = (rule.__doc__ or "").strip().splitlines()[0]
    return first.removeprefix(f"{rule.ID}:").strip()
