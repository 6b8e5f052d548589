"""A policy's tag scheme reaches every command that classifies a tag: `lock` records it, `check` agrees.

The Ray Train DLCs move `-vX.Y` and freeze `-vX.Y.Z`, pinguard's built-in rule. The older
framework DLCs (pytorch-training and friends) document `-vX.Y` followed by a timestamp, and
`-vX.Y` itself, as fixed, and only tags without a version or with a major version alone as
overwritten. A policy saying so must change what `lock` records, and `check` must agree.
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from testing.images import image
from testing.proxy import LatencyProxy
from tests.conftest import UNPACED, SeededRegistry

pytestmark = pytest.mark.registry
REPOSITORY = "deep-learning-containers/pytorch-training"
TAG = "2.5.1-gpu-py311-cu124-ubuntu22.04-ec2-v1.12"
POLICY = """\
extends: aws-dlc
tags:
  - repository: "public.ecr.aws/deep-learning-containers/pytorch-training"
    moving: '-(ec2|sagemaker|v\\d+)$'
    frozen: '-v\\d+\\.\\d+(-\\d{4}(-\\d{2}){5})?$'
"""


def _run(args: list[str], proxy: LatencyProxy, work: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(work / "home"), "PINGUARD_CACHE_DIR": str(work / "cache")}
    flags = ["--mirror", f"public.ecr.aws={proxy.url}", *UNPACED] if args[0] == "lock" else []  # check: offline
    status = main([*args, *flags], env=env, stdout=out, stderr=err)
    return status, out.getvalue() + err.getvalue()


@pytest.mark.parametrize(("policy", "kind"), [(None, "moving"), (POLICY, "frozen")], ids=["built-in", "policy"])
def test_the_policy_decides_what_lock_records_and_check_agrees(
        token_registry: SeededRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        policy: str | None, kind: str) -> None:
    pusher = token_registry.registry.pusher()
    for tag in (TAG, f"{TAG}-2026-11-20-19-32-14", "2.5.1-gpu-py311-cu124-ubuntu22.04-ec2"):
        pusher.push(REPOSITORY, image(seed="pytorch-training-2.5.1"), tag)
    monkeypatch.chdir(tmp_path)
    pod = f"kind: Pod\nspec:\n  containers:\n  - image: public.ecr.aws/{REPOSITORY}:{TAG}\n"
    (tmp_path / "pod.yaml").write_text(pod)
    chosen = ["--policy", "aws-dlc"]
    if policy is not None:
        (tmp_path / ".pinguard.yaml").write_text(policy)
        chosen = []  # read from .pinguard.yaml, by lock as by check
    assert token_registry.registry.token_server is not None
    with LatencyProxy(token_registry.registry.url, delay=0, ca_file=token_registry.registry.ca_file,
                      token_url=token_registry.registry.token_server.url) as proxy:
        status, said = _run(["lock", *chosen], proxy, tmp_path)
        assert status == 0, said
        entry = lockfile.read(tmp_path / "pinguard.lock").get(f"public.ecr.aws/{REPOSITORY}", TAG)
        assert entry is not None and entry.tag_kind == kind
        listed = proxy.counts[("GET", "tags")]
        assert listed == (1 if kind == "moving" else 0)  # a frozen tag needs no search for its frozen alias
        status, said = _run(["check", *chosen], proxy, tmp_path)
    # Unpinned either way (an error); the moving-tag warning only where the tag moves.
    assert status == 1
    assert ("[moving-tag]" in said) is (kind == "moving"), said
