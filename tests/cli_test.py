from __future__ import annotations

import argparse
import io
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from pinguard import __version__, cli
from pinguard.cli import main
from pinguard.policy.model import Policy
from pinguard.sources import kinds

HEAVY = ("requests", "urllib3", "boto3", "botocore", "kubernetes", "ray", "torch", "transformers", "sigstore",
         "cryptography")


def test_the_command_line_front_imports_nothing_heavy() -> None:
    """Offline commands run on every commit: loading the front end must not load the network stack."""
    code = "import sys, pinguard.cli; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert [name for name in loaded if name.split(".")[0] in HEAVY] == []
    # what only some commands use is imported by them: parsing the command line reads no YAML, no file kind,
    # no cache
    assert [name for name in loaded if name in ("yaml", "pinguard.registry.cache", "pinguard.sources.base",
                                                "pinguard.resolve.settings", "pinguard.policy.load")] == []


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"pinguard {__version__}\n"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _flags(parser: argparse.ArgumentParser) -> list[tuple[tuple[str, ...], str, object]]:
    return [(tuple(action.option_strings), action.dest, action.default) for action in parser._actions]


def test_the_parser_holds_the_tables_commands_each_with_the_flags_it_declares() -> None:
    subparsers = _subparsers(cli.parser())
    assert list(subparsers) == list(cli.COMMANDS)
    for name, subparser in subparsers.items():
        declared = cli.command(name)
        assert declared.name == name
        alone = argparse.ArgumentParser()
        declared.options(alone)
        assert _flags(subparser) == _flags(alone), name
        # --policy is there exactly where the command runs under a policy, and says its default
        policy = next((action for action in subparser._actions if action.dest == "policy"), None)
        assert (policy is None) is (declared.policy is None), name
        assert policy is None or declared.policy is None or declared.policy.said() in (policy.help or ""), name


@pytest.mark.parametrize("argv", [["check", "--strict", "-q", "a", "b"], ["pin", "--dry-run", "--to", "r.example"],
                                  ["post-render"], ["export", "admission", "--kind", "a/v1/K:spec"],
                                  ["copy", "--to", "r.example", "--platform", "linux/arm64", "-j", "3"]])
def test_a_command_parsed_alone_parses_as_the_whole_parser_does(argv: list[str]) -> None:
    """The first word names the command: only its module is loaded, and nothing parses differently."""
    assert cli.parser(argv[:1]).parse_args(argv) == cli.parser().parse_args(argv)
    assert list(_subparsers(cli.parser(argv[:1]))) == argv[:1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["resolve", "--platform", "linux", "nginx"], "invalid platform 'linux'"),
        (["resolve", "--mirror", "public.ecr.aws", "nginx"], "invalid mirror 'public.ecr.aws'"),
        (["resolve", "--jobs", "0", "nginx"], "--jobs must be at least 1"),
        (["resolve", "--mirror", "docker.io=http://10.1.2.3:5000", "nginx"], "refusing plain HTTP to 10.1.2.3:5000"),
        (["resolve", "nginx:"], 'invalid reference "nginx:": empty tag'),
        (["resolve", "--rate", "public.ecr.aws", "nginx"], "invalid rate 'public.ecr.aws': expected REGISTRY=N"),
        (["lock", "--rate", "public.ecr.aws=0"], "invalid rate 'public.ecr.aws=0'"),
        (["verify", "--rate", "docker.io=fast"], "invalid rate 'docker.io=fast'"),
        (["resolve", "--timeout", "0", "nginx"], "--timeout must be a number of seconds above 0"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(args, env={}, stdout=out, stderr=err) == 2
    assert message in err.getvalue()
    assert err.getvalue().count("\n") == 1 and out.getvalue() == ""


@pytest.mark.parametrize("command", ["check", "pin", "scan"])
def test_offline_commands_import_nothing_heavy(command: str, tmp_path: Path) -> None:
    """`check` and `pin` run on every commit: they must never pay for the network or training stack."""
    (tmp_path / "pod.yaml").write_text("kind: Pod\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n")
    code = ("import sys; from pinguard.cli import main; status = main(sys.argv[1:]); "
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code, command, "pod.yaml"], cwd=tmp_path, capture_output=True,
                            text=True, check=False)
    loaded = result.stderr.split()
    assert [name for name in loaded if name.split(".")[0] in HEAVY] == []
    assert "pinguard.sources.kubernetes" in loaded  # the command really ran
    commands = {f"pinguard.commands.{name.replace('-', '_')}" for name in cli.COMMANDS}
    assert commands.intersection(loaded) == {f"pinguard.commands.{command}"}  # no other command's module
    # One manifest is read by its own source: no other kind's, no Helm, no charts (no Chart.yaml above it).
    others = {f"pinguard.sources.{name}" for name in kinds.MODULES.values()} - {
        "pinguard.sources.kubernetes", "pinguard.sources.runtime_env"}  # RayJob's runtime_env is read inside
    assert sorted(others.intersection(loaded)) == []
    assert [name for name in loaded if name.startswith("pinguard.helm.")
            and name not in ("pinguard.helm.reader", "pinguard.helm.roots", "pinguard.helm.settings")] == []


@pytest.mark.parametrize(
    ("policy", "flags", "pace"),
    [
        (None, [], "held to 1 request/s (anonymous: AWS credentials raise ECR Public's quota to 10/s)"),
        ("registries:\n  public.ecr.aws: {rate: 3}\n", [], "held to 3 request/s (--rate or policy)"),
        ("registries:\n  public.ecr.aws: {rate: 3}\n", ["--rate", "public.ecr.aws=0.5"],
         "held to 0.5 request/s (--rate or policy)"),  # the flag wins over the policy
    ],
    ids=["ecr-public-default", "policy", "flag-over-policy"],
)
def test_the_pace_comes_from_the_flag_the_policy_or_ecr_publics_quota(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: str | None, flags: list[str], pace: str) -> None:
    monkeypatch.chdir(tmp_path)
    if policy is not None:
        (tmp_path / ".pinguard.yaml").write_text(policy)
    err = io.StringIO()
    # Nothing listens on port 9: the request fails, and -v has said the pace before it.
    args = ["resolve", "-v", "--timeout", "0.5", "--mirror", "public.ecr.aws=http://127.0.0.1:9", *flags,
            "public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1"]
    assert main(args, env={"HOME": str(tmp_path)}, stdout=io.StringIO(), stderr=err) == 2
    assert f"pinguard: public.ecr.aws: {pace}\n" in err.getvalue()


def test_a_policy_nested_ten_thousand_deep_is_a_clear_error(tmp_path: Path) -> None:
    policy = tmp_path / "deep.yaml"
    policy.write_text("rules: " + "[" * 10000 + "]" * 10000 + "\n")
    err = io.StringIO()
    assert main(["check", "--policy", str(policy), str(tmp_path)], env={}, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue().startswith(f"pinguard: error: invalid policy {policy}: ")
    assert "Traceback" not in err.getvalue()


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--rate", "foo=1", "--mirror", "a=https://b", "--platform", "linux/arm64", "-j", "3", "."],
        ["scan", "--timeout", "3", "."],
        ["scan", "--lockfile", "other.lock", "."],
        ["resolve", "--lockfile", "other.lock", "nginx:1.25"],
        ["export", "admission", "--platform", "linux/arm64"],
        ["audit", "--mirror", "docker.io=https://mirror.example"],
        ["run", "--timeout", "60", "job.yaml"],  # its watch is --watch-timeout; --timeout is the registry deadline
        ["post-render", "-v"],
    ],
    ids=["check-registry-flags", "scan-timeout", "scan-lockfile", "resolve-lockfile", "export-platform",
         "audit-mirror", "run-timeout", "post-render-verbose"],
)
def test_a_flag_the_command_would_ignore_is_refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A flag that means nothing to a command would pass a CI gate with a typo in it: it is a usage error."""
    with pytest.raises(SystemExit) as stopped:
        main(args, env={}, stdout=io.StringIO(), stderr=io.StringIO())
    assert stopped.value.code == 2
    assert "unrecognized arguments: " in capsys.readouterr().err


POD = "kind: Pod\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n"


def test_pin_takes_registry_options_only_with_resolve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_text(POD)
    err = io.StringIO()
    args = ["pin", "--mirror", "docker.io=https://mirror.example", "--platform", "linux/arm64", "-v", "pod.yaml"]
    assert main(args, env={}, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue() == ("pinguard: error: --mirror, --platform, --verbose: only with --resolve, which reaches "
                              "registries\n")
    assert Path("pod.yaml").read_text() == POD and not Path("pinguard.lock").exists()
    err = io.StringIO()  # with --resolve they count: this one is checked before anything is asked
    assert main(["pin", "--resolve", "-j", "0", "pod.yaml"], env={}, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue() == "pinguard: error: --jobs must be at least 1\n"


def test_an_error_of_several_failures_says_each_then_what_came_of_them(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_text(POD)
    for name in ("a.yaml", "b.yaml"):
        Path(name).write_bytes(b"kind: Pod\nimage: caf\xe9\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["pin", "."], env={}, stdout=out, stderr=err) == 2
    *failures, last = err.getvalue().splitlines()
    assert failures == [f"pinguard: {name}:1:1: not UTF-8 text (byte 20 is invalid)" for name in ("a.yaml", "b.yaml")]
    assert last == "pinguard: nothing written: fix the files above first"
    assert out.getvalue() == "" and Path("pod.yaml").read_text() == POD


@pytest.mark.parametrize(
    ("args", "loaded"),
    [
        (["check", "pod.yaml"], [([], "default", True)]),
        (["run", "--dry-run", "pod.yaml"], [([], "aws-dlc", False)]),  # the gate's preset, never .pinguard.yaml
        (["run", "--dry-run", "--policy", "default", "pod.yaml"], [([Path("default")], "aws-dlc", False)]),
        (["scan", "pod.yaml"], []),  # offline, none named nor at hand: none loaded
        (["pin", "--dry-run", "pod.yaml"], []),
        (["pin", "--dry-run", "--policy", "aws-dlc", "pod.yaml"], [([Path("aws-dlc")], "default", True)]),
        (["pin", "--resolve", "--dry-run", "empty.yaml"], [([], "default", True)]),  # reaching registries: one
        (["export", "admission"], []),
        (["verify"], []),  # online, but running no rule: the default preset would change nothing
        (["update", "--dry-run"], []),
        (["copy", "--to", "registry.example/mirror", "--dry-run"], []),
        (["verify", "--policy", "aws-dlc"], [([Path("aws-dlc")], "default", True)]),
    ],
)
def test_the_policy_is_loaded_once_under_the_command_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str],
        loaded: list[tuple[list[Path], str, bool]]) -> None:
    from pinguard.policy import load

    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_text(POD)
    Path("empty.yaml").write_text("kind: ConfigMap\n")
    asked: list[tuple[list[Path], str, bool]] = []
    real = load.for_command

    def for_command(named: Sequence[Path], default: str = "default", *, project: bool = True) -> Policy:
        asked.append((list(named), default, project))
        return real(named, default, project=project)

    monkeypatch.setattr(load, "for_command", for_command)
    main(args, env={"HOME": str(tmp_path)}, stdout=io.StringIO(), stderr=io.StringIO())
    assert asked == loaded


def test_the_project_policy_counts_for_offline_commands_when_at_hand(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_text(POD)
    Path(".pinguard.yaml").write_text("rules: {no-such-rule: error}\n")
    for command in ("scan", "pin", "check"):
        err = io.StringIO()
        assert main([command, "pod.yaml"], env={}, stdout=io.StringIO(), stderr=err) == 2, command
        assert err.getvalue().startswith("pinguard: error: invalid policy .pinguard.yaml: ")
    err = io.StringIO()  # `run`'s gate reads its preset, not the project's: it gets as far as the lock
    assert main(["run", "--dry-run", "pod.yaml"], env={}, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue() == "pinguard: error: pinguard.lock: no locked images: run `pinguard lock` first\n"


@pytest.mark.parametrize(
    ("command", "default"),
    [
        ("check", "default: .pinguard.yaml if present, else the `default` preset)"),
        ("lock", "default: .pinguard.yaml if present, else the `default` preset)"),
        ("run", "default: the `aws-dlc` preset)"),
        ("scan", "default: .pinguard.yaml if present, else none)"),
        ("pin", "default: .pinguard.yaml if present, else none; with --resolve, else the `default` preset)"),
    ],
)
def test_the_policy_option_names_the_command_default(command: str, default: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert default in " ".join(capsys.readouterr().out.split())


def test_the_default_preset_sets_nothing_but_rules() -> None:
    """The commands that run no rule read no policy where the `default` preset would be theirs: it must hold
    nothing else they read (tags, registries, provenance, helm, ecr, sidecars)."""
    from pinguard.policy.load import load, preset

    shipped, nothing = load([preset("default")]), load([])
    assert replace(shipped, rules=nothing.rules) == nothing
    assert replace(load([preset("aws-dlc")]), rules=nothing.rules) != nothing  # a preset that sets more is told
