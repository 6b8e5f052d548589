"""The flags more than one command takes, declared once."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pinguard.cli import COMMANDS, command, parser
from pinguard.commands import flags
from pinguard.commands.flags import REGISTRY_OPTIONS, PolicyDefault


def registry_parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser()
    flags.registry(made)
    return made


def test_the_registry_options_are_the_flags_registry_declares_and_none_has_a_default() -> None:
    """`pin` refuses a registry flag given without --resolve by these names: one declared and not listed would
    slip through."""
    made = registry_parser()
    declared = {action.dest for action in made._actions if action.dest != "help"}
    assert declared == set(REGISTRY_OPTIONS)
    assert vars(made.parse_args([])) == dict.fromkeys(REGISTRY_OPTIONS)


def test_registry_flags_parse_to_what_the_context_reads() -> None:
    args = registry_parser().parse_args(["--mirror", "a=b", "--mirror", "c=d", "-j", "3", "--timeout", "2.5",
                                         "--insecure-registry", "h:1", "-v"])
    assert args.mirror == ["a=b", "c=d"] and args.jobs == 3 and args.timeout == 2.5
    assert args.insecure_registry == ["h:1"] and args.verbose is True


@pytest.mark.parametrize(("default", "said"), [
    (PolicyDefault("default"), ".pinguard.yaml if present, else the `default` preset"),
    (PolicyDefault("aws-dlc", project=False), "the `aws-dlc` preset"),
    (PolicyDefault(None), ".pinguard.yaml if present, else none"),
])
def test_a_policy_default_says_what_it_loads(default: PolicyDefault, said: str) -> None:
    assert default.said() == said


def test_every_commands_policy_help_says_its_own_default() -> None:
    for name in COMMANDS:
        declared = command(name)
        subparser = next(action for action in parser([name])._actions
                         if isinstance(action, argparse._SubParsersAction)).choices[name]
        policy = next((action for action in subparser._actions if action.dest == "policy"), None)
        assert (policy is not None) == (declared.policy is not None), name  # --policy only where one is read
        if policy is not None and declared.policy is not None:
            assert declared.policy.said() in (policy.help or ""), name


def test_output_dash_is_standard_output() -> None:
    assert flags.output_path("-") is None
    assert flags.output_path("report.sarif") == Path("report.sarif")


def test_keep_registry_is_on_unless_turned_off() -> None:
    made = argparse.ArgumentParser()
    flags.keep_registry(made)
    assert made.parse_args([]).keep_registry is True
    assert made.parse_args(["--no-keep-registry"]).keep_registry is False


def test_the_tools_are_taken_together_and_default_to_none() -> None:
    made = argparse.ArgumentParser()
    flags.tools(made)
    assert vars(made.parse_args([])) == {"helm": None, "kustomize": None}
    assert vars(made.parse_args(["--helm", "h", "--kustomize", "k"])) == {"helm": "h", "kustomize": "k"}
