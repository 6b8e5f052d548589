"""Every rule, by ID. One module per rule; its docstring is its documentation.

Each module declares `ID` (kebab-case), `TYPE` (what `check` receives),
`CONF` (option name to type: `str`, `bool`, `int`, or `[str]` for a list of
strings), `DEFAULT` (level and options) and `check`:

- TYPE "reference": `check(conf, found, context)`, once per image reference;
- TYPE "document": `check(conf, document, where)`, once per Kubernetes document;
- TYPE "lock": `check(conf, found, context, lock_text)`, once per run.

Rules yield `Problem`s; the policy stamps rule and severity, and applies
suppressions, so rules know nothing of either.
"""
from __future__ import annotations

from types import ModuleType

from pinguard.policy.rules import (
    allowed_registries,
    denied_tags,
    digest_mismatch,
    moving_tag,
    not_locked,
    ray_efa,
    ray_same_image,
    runtime_env_pins,
    templated,
    unpinned,
    unused_lock_entry,
)

RULES: dict[str, ModuleType] = {
    module.ID: module
    for module in (
        allowed_registries,
        denied_tags,
        digest_mismatch,
        moving_tag,
        not_locked,
        ray_efa,
        ray_same_image,
        runtime_env_pins,
        templated,
        unpinned,
        unused_lock_entry,
    )
}


def summary(rule: ModuleType) -> str:
    """The first line of a rule's docstring, without its ID: what the rule asks for."""
    first = (rule.__doc__ or "").strip().splitlines()[0]
    return first.removeprefix(f"{rule.ID}:").strip()
