from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from pinguard import __version__
from pinguard.cli import main

HEAVY = ("requests", "urllib3", "boto3", "botocore", "kubernetes", "ray", "torch", "transformers", "sigstore",
         "cryptography")


def test_the_command_line_front_imports_nothing_heavy() -> None:
    """Offline commands run on every commit: loading the front end must not load the network stack."""
    code = "import sys, pinguard.cli; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert [name for name in loaded if name.split(".")[0] in HEAVY] == []


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"pinguard {__version__}\n"


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
