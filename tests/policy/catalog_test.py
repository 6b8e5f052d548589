"""The catalog of rules: every rule module named in it, and run by its type."""
from __future__ import annotations

from pathlib import Path

from pinguard.policy import rules
from pinguard.policy.catalog import (
    ACTION_RULES,
    DOCUMENT_LOCK_RULES,
    DOCUMENT_RULES,
    LOCK_RULES,
    REFERENCE_RULES,
    RULES,
    YAML_RULES,
)


def test_every_rule_module_is_in_the_catalog_and_runs_by_its_type() -> None:
    modules = {path.stem for path in Path(rules.__file__).parent.glob("*.py")} - {"__init__", "common"}
    assert sorted(module.__name__.rpartition(".")[2] for module in RULES.values()) == sorted(modules)
    run = [rule.ID for kind in (REFERENCE_RULES, ACTION_RULES, DOCUMENT_RULES, DOCUMENT_LOCK_RULES, LOCK_RULES,
                                YAML_RULES)
           for rule in kind]
    assert sorted(run) == sorted(RULES)  # each rule in one list: none with a TYPE that nothing runs
