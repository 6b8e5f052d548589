"""The registry client's own checks: bodies must hash to what was asked or claimed, and a missing
repository, tag or digest is told apart from a registry that answers nonsense."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.errors import DigestMismatch, NotFound, RegistryError
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from testing.fake_registry import FakeRegistry, Response, Route, digest, error_response, serve_manifests
from testing.images import multi_platform
from tests.registry.conftest import REGISTRY

REPO = "deep-learning-containers/ray"
INDEX = multi_platform("client")
MANIFESTS = {"v1": (INDEX.media_type, INDEX.data)}
MANIFEST_PATH = rf"/v2/{REPO}/manifests/[^/]+"


def healthy(*faults: Route) -> list[Route]:
    """`faults` first, then a registry serving MANIFESTS correctly."""
    return [*faults, *serve_manifests(REPO, MANIFESTS)]


def test_manifest_by_digest_that_hashes_otherwise(fake: FakeRegistry, client: RegistryClient, tmp_path: Path) -> None:
    tampered = Response(
        200,
        {"Docker-Content-Digest": INDEX.digest, "Content-Type": INDEX.media_type},
        INDEX.data.replace(b"amd64", b"arm64"),
    )
    fake.add(*healthy(Route("GET", rf"/v2/{REPO}/manifests/{INDEX.digest}", tampered)))
    with pytest.raises(DigestMismatch) as caught:
        client.cached_manifest(REGISTRY, REPO, INDEX.digest)
    assert INDEX.digest in str(caught.value)
    assert digest(tampered.body) in str(caught.value)
    assert RegistryCache(tmp_path / "cache").get(digest(tampered.body)) is None  # nothing kept



def test_digest_header_that_disagrees_with_the_body(fake: FakeRegistry, client: RegistryClient) -> None:
    claimed = "sha256:" + "0" * 64
    lying = Response(200, {"Docker-Content-Digest": claimed, "Content-Type": INDEX.media_type}, INDEX.data)
    fake.add(*healthy(Route("GET", MANIFEST_PATH, lying)))
    with pytest.raises(DigestMismatch, match=f"claims digest {claimed}.*hash to {INDEX.digest}"):
        client.cached_manifest(REGISTRY, REPO, "v1")



@pytest.mark.parametrize(
    ("repository", "reference", "error", "message"),
    [
        (
            "nope/missing",
            "v1",
            error_response(404, "NAME_UNKNOWN"),
            f"{REGISTRY}/nope/missing: repository not found",
        ),
        (REPO, "v9", None, f"{REGISTRY}/{REPO}: v9 not found"),
        (REPO, "sha256:" + "1" * 64, None, f"{REGISTRY}/{REPO}: sha256:{'1' * 64} not found"),
    ],
)
def test_not_found(
    fake: FakeRegistry,
    client: RegistryClient,
    repository: str,
    reference: str,
    error: Response | None,
    message: str,
) -> None:
    fake.add(*healthy(*([Route("*", rf"/v2/{repository}/.+", error)] if error else [])))
    with pytest.raises(NotFound) as caught:
        client.head_manifest(REGISTRY, repository, reference)
    assert str(caught.value) == message
    # HEAD carries no error body, so the client asked again with GET to tell which is missing.
    manifest_requests = fake.requests_to(rf"/v2/{repository}/manifests/[^/]+")
    assert [r.method for r in manifest_requests] == ["HEAD", "GET"]



def test_unknown_repository_when_listing_tags(fake: FakeRegistry, client: RegistryClient) -> None:
    fake.add(Route("GET", r"/v2/nope/missing/tags/list", error_response(404, "NAME_UNKNOWN")))
    with pytest.raises(NotFound, match="repository not found"):
        client.list_tags(REGISTRY, "nope/missing")



def test_tags_list_that_is_not_json(fake: FakeRegistry, client: RegistryClient) -> None:
    html = Response(200, {"Content-Type": "text/html"}, b"<html>rate limited, try later</html>")
    fake.add(*healthy(Route("GET", rf"/v2/{REPO}/tags/list", html)))
    with pytest.raises(RegistryError, match=f"{REGISTRY}/{REPO}: tags list is not JSON"):
        client.list_tags(REGISTRY, REPO)
