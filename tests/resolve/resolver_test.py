"""The resolver (`pinguard.resolve.resolver`) against a FAKE registry: digests verified, tags kinded,
and the frozen alias behind a moving tag found newest first."""

from __future__ import annotations

import pytest

from pinguard.errors import NotFound
from pinguard.reference import parse
from pinguard.registry.client import RegistryClient
from pinguard.resolve.resolved import Resolved
from pinguard.resolve.resolver import Resolver
from pinguard.resolve.tags import TagKind
from testing.fake_registry import FakeRegistry, serve_manifests
from testing.images import Manifest, multi_platform
from tests.registry.conftest import REGISTRY

REPO = "deep-learning-containers/ray"
TAGS_PATH = f"/v2/{REPO}/tags/list"
MOVING = "train-ml-cuda-v1.1"

# Listed in this order, three to a page: the alias stands last, on the third page, behind
# decoys that share its digest but cannot stand behind the moving tag.
LISTING = [
    MOVING,
    "train-ml-cuda-v1.1.0",
    "train-ml-cuda-v1.1.10",
    "train-ml-cuda-v1.10.0",
    "train-ml-cpu-v1.1.9",
    "train-ml-cuda-v1.1.2",
    "train-ml-cuda-v1.1.8",
    "train-ml-cuda-v1.1.9",
]
NEWEST_FIRST = [f"train-ml-cuda-v1.1.{n}" for n in (10, 9, 8, 2, 0)]


def served(images: dict[str, Manifest]) -> dict[str, tuple[str, bytes]]:
    return {tag: (image.media_type, image.data) for tag, image in images.items()}



@pytest.mark.parametrize(
    ("serves", "alias", "heads"),
    [
        ("train-ml-cuda-v1.1.9", "train-ml-cuda-v1.1.9", NEWEST_FIRST[:2]),
        ("train-ml-cuda-v1.1.10", "train-ml-cuda-v1.1.10", NEWEST_FIRST[:1]),
        ("train-ml-cuda-v1.10.0", None, NEWEST_FIRST),
    ],
    ids=["alias-on-the-last-page", "newest-matches-at-once", "no-alias"],
)
def test_frozen_alias_newest_first(
    fake: FakeRegistry, client: RegistryClient, serves: str, alias: str | None, heads: list[str]
) -> None:
    images = {tag: multi_platform(tag) for tag in LISTING}
    # The moving tag and both decoys serve one digest; of the candidates only `serves` shares it.
    images[MOVING] = images["train-ml-cuda-v1.10.0"] = images["train-ml-cpu-v1.1.9"] = images[serves]
    fake.add(*serve_manifests(REPO, served(images), tags=LISTING, page_size=3))

    resolved = Resolver(client).resolve(parse(f"{REGISTRY}/{REPO}:{MOVING}"))

    assert resolved.digest == images[serves].digest
    assert resolved.tag_kind is TagKind.MOVING
    assert resolved.frozen_tag == alias
    assert len(fake.requests_to(TAGS_PATH)) == 3
    head_paths = [r.path for r in fake.requests if r.method == "HEAD"]
    assert head_paths == [f"/v2/{REPO}/manifests/{tag}" for tag in heads]
    assert [r.path for r in fake.requests if r.method == "GET" and "/manifests/" in r.path] == [
        f"/v2/{REPO}/manifests/{MOVING}"]  # the moving tag itself: one GET, hashed


def test_each_reference_is_resolved_once_and_failures_are_returned(fake: FakeRegistry,
                                                                   client: RegistryClient) -> None:
    image = multi_platform("resolver")
    fake.add(*serve_manifests(REPO, {"1.0": (image.media_type, image.data)}))
    served_tag, missing = parse(f"{REGISTRY}/{REPO}:1.0"), parse(f"{REGISTRY}/{REPO}:9.9")
    outcomes = Resolver(client, clock=lambda: "2026-11-30T05:00:00Z").resolve_all([served_tag, missing, served_tag])
    assert list(outcomes) == [served_tag, missing]
    resolved = outcomes[served_tag]
    assert isinstance(resolved, Resolved)
    assert (resolved.digest, resolved.resolved_at, resolved.size) == (image.digest, "2026-11-30T05:00:00Z",
                                                                      len(image.data))
    assert isinstance(outcomes[missing], NotFound)
    assert len(fake.requests_to(f"/v2/{REPO}/manifests/1.0")) == 1


def test_a_digest_written_beside_a_tag_it_does_not_match_is_marked(fake: FakeRegistry,
                                                                   client: RegistryClient) -> None:
    now, before = multi_platform("now"), multi_platform("before")
    fake.add(*serve_manifests(REPO, {"1.0": (now.media_type, now.data), before.digest: (before.media_type,
                                                                                        before.data)}))
    resolved = Resolver(client).resolve(parse(f"{REGISTRY}/{REPO}:1.0@{before.digest}"))
    assert resolved.digest == before.digest
    assert (resolved.tag_served, resolved.tag_digest) == (False, now.digest)
    assert resolved.tag_kind is not TagKind.MOVING
