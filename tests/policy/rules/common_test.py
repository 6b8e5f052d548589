"""What the rules share: globs matched, a finding placed at what was written, the subjects evidence must be about."""
from __future__ import annotations

from pinguard.lock.lockfile import LockEntry
from pinguard.policy.rules.common import Subject, at, listed, matches, subjects
from pinguard.reference import parse
from pinguard.sources.base import REMOTE, ActionUse, Found, Span
from pinguard.uses import parse_uses

INDEX = "application/vnd.oci.image.index.v1+json"
DIGEST, AMD, ARM = ("sha256:" + c * 64 for c in "abc")


def test_no_patterns_match_anything_but_list_nothing() -> None:
    assert matches("docker.io/nginx", []) and matches(None, [])
    assert not listed("docker.io/nginx", []) and not listed(None, ["*"])
    assert listed("public.ecr.aws/dlc/ray", ["public.ecr.aws/*"]) and not matches("docker.io/x", ["public.ecr.aws/*"])


def test_a_finding_points_at_what_was_written_image_or_action() -> None:
    found = Found("a.yaml", "kubernetes", Span(10, 20, 3, 12), "nginx:1.25", parse("nginx:1.25"))
    use = ActionUse("ci.yml", Span(5, 24, 7, 15), "actions/checkout@v6", REMOTE, parse_uses("actions/checkout@v6"))
    image = at(found, "m")
    assert (image.file, image.line, image.column, image.reference) == ("a.yaml", 3, 12, "nginx:1.25")
    action = at(use, "unpinned")
    assert (action.file, action.line, action.column, action.message, action.reference) == (
        "ci.yml", 7, 15, "unpinned", "actions/checkout@v6")


def test_evidence_is_wanted_for_every_platform_and_the_index_when_asked() -> None:
    entry = LockEntry("public.ecr.aws/dlc/ray", "v1", DIGEST, INDEX, 1, "moving", None, "t",
                      {"linux/amd64": AMD, "linux/arm64": ARM})
    assert subjects(entry, require_index=False) == [Subject("the linux/amd64 image", AMD),
                                                    Subject("the linux/arm64 image", ARM)]
    assert subjects(entry, require_index=True)[-1] == Subject("the index", DIGEST)
    bare = LockEntry("x/y", "1", DIGEST, INDEX, 1, "other", None, "t", {})
    assert subjects(bare, require_index=False) == [Subject("the index", DIGEST)]  # nothing else to be about
