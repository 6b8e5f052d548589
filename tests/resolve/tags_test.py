from __future__ import annotations

import pytest

from pinguard.errors import PinguardError
from pinguard.resolve.tags import TagKind, TagRule, TagRules

DLC = "public.ecr.aws/deep-learning-containers/ray"


@pytest.mark.parametrize(
    ("tag", "kind"),
    [
        ("train-ml-cuda-v1.1", TagKind.MOVING),
        ("train-ml-cuda-v1", TagKind.MOVING),
        ("v2", TagKind.MOVING),
        ("latest", TagKind.MOVING),
        ("train-ml-cuda-v1.1.0", TagKind.FROZEN),
        ("v1.2.3", TagKind.FROZEN),
        ("2.6.0-gpu-py312-cu124-ubuntu22.04-ec2", TagKind.OTHER),
        ("1.25", TagKind.OTHER),
        ("main", TagKind.OTHER),
        ("train-ml-cuda-v1.1.0-rc1", TagKind.OTHER),
    ],
)
def test_default_kinds(tag: str, kind: TagKind) -> None:
    assert TagRules().kind(DLC, tag) is kind


def test_rules_per_repository() -> None:
    rules = TagRules((TagRule.create("docker.io/library/*", moving=r"^\d+\.\d+$", frozen=r"^\d+\.\d+\.\d+$"),))
    assert rules.kind("docker.io/library/nginx", "1.25") is TagKind.MOVING
    assert rules.kind("docker.io/library/nginx", "1.25.3") is TagKind.FROZEN
    assert rules.kind(DLC, "1.25") is TagKind.OTHER  # other repositories keep the default rule


def test_invalid_pattern_is_a_clear_error() -> None:
    with pytest.raises(PinguardError, match="tag rule for 'x/\\*': invalid pattern"):
        TagRule.create("x/*", moving="(", frozen="x")


@pytest.mark.parametrize(
    ("moving", "tags", "expected"),
    [
        (
            "train-ml-cuda-v1.1",
            ["train-ml-cuda-v1.1.0", "train-ml-cuda-v1.1.10", "train-ml-cuda-v1.1.2", "train-ml-cuda-v1.10.0",
             "train-ml-cuda-v1.0.0", "train-ml-cpu-v1.1.9", "train-ml-cuda-v1.1"],
            ["train-ml-cuda-v1.1.10", "train-ml-cuda-v1.1.2", "train-ml-cuda-v1.1.0"],
        ),
        ("v1", ["v1.0.0", "v1.2.0", "v2.0.0", "v10.0.0"], ["v1.2.0", "v1.0.0"]),
        ("latest", ["v1.0.0", "x-v2.0.1", "main"], ["x-v2.0.1", "v1.0.0"]),
    ],
)
def test_frozen_candidates_newest_first(moving: str, tags: list[str], expected: list[str]) -> None:
    assert TagRules().frozen_candidates(DLC, moving, tags) == expected
