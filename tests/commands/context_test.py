"""The context a command runs in: what it derives from the flags, the policy and the environment it was handed."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import command, parser
from pinguard.commands.context import Context
from pinguard.commands.options import Options
from pinguard.errors import PinguardError
from pinguard.registry.manifest import Platform


def context(*argv: str, env: dict[str, str] | None = None) -> Context:
    """The context `pinguard ARGV` would run in, with `env` as its environment."""
    args = parser([argv[0]]).parse_args(list(argv))
    return Context(command(args.command), Options(io.StringIO(), io.StringIO(), env or {}), args)


@pytest.mark.parametrize(("env", "expected"), [
    ({"PINGUARD_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/c"),
    ({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/pinguard"),
    ({"HOME": "/h"}, "/h/.cache/pinguard"),
    ({"PINGUARD_CACHE_DIR": "", "XDG_CACHE_HOME": "", "HOME": "/h"}, "/h/.cache/pinguard"),  # empty is unset
])
def test_the_cache_folder_comes_from_the_environment_handed_to_the_command(env: dict[str, str],
                                                                           expected: str) -> None:
    assert context("resolve", "x", env=env).cache_dir() == Path(expected)


def test_online_settings_come_from_the_flags_over_the_policy_and_the_environment(tmp_path: Path) -> None:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("registries:\n  public.ecr.aws: {rate: 3}\n  ghcr.io: {rate: 4}\n")
    run = context("resolve", "--rate", "ghcr.io=7", "--platform", "linux/arm64", "-j", "2", "--timeout", "9",
                  "--policy", str(policy_file), "x",
                  env={"PINGUARD_MIRRORS": "docker.io=http://127.0.0.1:5000", "GITHUB_SERVER_URL": "https://git.example",
                       "GH_TOKEN": "t0ken", "HOME": str(tmp_path)})
    online = run.online(run.policy())
    assert online.registry.rates == {"public.ecr.aws": 3.0, "ghcr.io": 7.0}  # the flag wins, the rest stays
    assert online.platforms == (Platform.parse("linux/arm64"),)
    assert online.registry.workers == 2 and online.registry.timeout == 9.0
    assert online.registry.mirrors == {"docker.io": "http://127.0.0.1:5000"}
    assert online.git.base_url == "https://git.example" and online.git.token == "t0ken"
    assert online.cache_dir == tmp_path / ".cache" / "pinguard"
    assert online.progress is run.options.stderr


def test_a_commands_own_deadline_holds_unless_timeout_is_given() -> None:
    assert context("resolve", "x").online(None, deadline=42.0).registry.timeout == 42.0
    assert context("resolve", "--timeout", "5", "x").online(None, deadline=42.0).registry.timeout == 5.0


@pytest.mark.parametrize(("flags", "message"), [
    (["-j", "0"], "--jobs must be at least 1"),
    (["--timeout", "0"], "--timeout must be a number of seconds above 0"),
    (["--timeout", "inf"], "--timeout must be a number of seconds above 0"),
    (["--timeout", "nan"], "--timeout must be a number of seconds above 0"),
    (["--platform", "linux"], "linux"),
    (["--rate", "ghcr.io=fast"], "invalid rate 'ghcr.io=fast'"),
])
def test_registry_flags_that_mean_nothing_are_refused(flags: list[str], message: str) -> None:
    with pytest.raises(PinguardError, match=message):
        context("resolve", *flags, "x").online(None)


def test_registry_flags_are_refused_where_nothing_reaches_a_registry() -> None:
    context("pin").offline()  # none given: nothing to refuse
    with pytest.raises(PinguardError) as caught:
        context("pin", "--rate", "ghcr.io=2", "-v", "--ca-file", "ca.pem").offline()
    assert str(caught.value) == "--ca-file, --rate, --verbose: only with --resolve, which reaches registries"


def test_file_reading_takes_the_tools_named_on_the_command_line_and_the_environment_handed_over(
        tmp_path: Path) -> None:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("helm:\n  binary: /opt/helm\nkustomize:\n  binary: /opt/kubectl\n")
    env = {"PINGUARD_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/nowhere"}
    named = context("check", "--helm", "/usr/local/bin/helm", "--policy", str(policy_file), env=env)
    scan = named.sources(named.policy())
    assert scan.helm.binary == "/usr/local/bin/helm"  # the flag over the policy
    assert scan.kustomize.binary == "/opt/kubectl"  # the policy where no flag is given
    assert scan.helm.cache_dir == scan.kustomize.cache_dir == tmp_path / "cache"
    assert scan.env == env  # never os.environ
    assert context("check", env=env).sources(None).helm.binary is None


def test_a_command_that_needs_no_policy_loads_none_unless_one_is_at_hand(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert context("resolve", "x").policy_at_hand() is None
    (tmp_path / ".pinguard.yaml").write_text("registries:\n  ghcr.io: {rate: 6}\n")
    at_hand = context("resolve", "x").policy_at_hand()
    assert at_hand is not None and at_hand.rates["ghcr.io"] == 6.0
