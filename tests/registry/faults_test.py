"""The registry client against a fake registry misbehaving on purpose.

Every case ends in the right digest or in a `PinguardError` whose message
says what happened and where; no other exception may escape.
"""

from __future__ import annotations

import dataclasses
import io
import re
import time
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.errors import DeadlinePassed, PinguardError, RegistryError
from pinguard.reference import parse
from pinguard.registry.client import RegistryClient
from pinguard.resolve.resolved import Resolved
from pinguard.resolve.resolver import Resolver
from testing.fake_registry import (
    Action,
    Delay,
    Drop,
    FakeRegistry,
    Redirect,
    Request,
    Response,
    Route,
    digest,
    manifest_response,
    serve_manifests,
)
from testing.images import multi_platform
from tests.registry.conftest import ATTEMPTS, REGISTRY, settings_for

REPO = "deep-learning-containers/ray"
INDEX = multi_platform("faults")
MANIFESTS = {"v1": (INDEX.media_type, INDEX.data)}
MANIFEST_PATH = rf"/v2/{REPO}/manifests/[^/]+"
# Promises the whole manifest, sends ten bytes, and closes the connection.
TRUNCATED = Response(
    200,
    {"Content-Length": str(len(INDEX.data)), "Content-Type": INDEX.media_type, "Connection": "close"},
    INDEX.data[:10],
)



def healthy(*faults: Route) -> list[Route]:
    """`faults` first, then a registry serving MANIFESTS correctly."""
    return [*faults, *serve_manifests(REPO, MANIFESTS)]


def test_retry_after_is_honoured(fake: FakeRegistry, client: RegistryClient) -> None:
    fake.add(*healthy(Route("HEAD", MANIFEST_PATH, [Response(429, {"Retry-After": "1"})])))
    started = time.monotonic()
    head = client.head_manifest(REGISTRY, REPO, "v1")
    # The policy's own backoff is at most 0.05 s, so a wait this long is the server's Retry-After (a lower
    # bound: a busy machine only lengthens it).
    assert time.monotonic() - started >= 0.9
    assert head.digest == INDEX.digest
    assert len(fake.requests) == 2


@pytest.mark.parametrize(
    ("faults", "requests_made"),
    [
        pytest.param([Response(429), Response(429)], 3, id="429-twice-without-retry-after"),
        pytest.param([Response(500), Response(503)], 3, id="500-then-503"),
        pytest.param([Drop()], 2, id="dropped-connection"),
        pytest.param([Response(502), Drop(), Response(504)], 4, id="mixed-up-to-the-last-attempt"),
        pytest.param([TRUNCATED], 2, id="body-cut-short"),
    ],
)
def test_transient_failures_are_retried(
    fake: FakeRegistry, client: RegistryClient, faults: list[Action], requests_made: int
) -> None:
    fake.add(*healthy(Route("GET", MANIFEST_PATH, faults)))
    body = client.cached_manifest(REGISTRY, REPO, "v1")
    assert body.digest == INDEX.digest
    assert body.data == INDEX.data
    assert len(fake.requests) == requests_made


def test_429s_are_waits_not_attempts(fake: FakeRegistry, client: RegistryClient) -> None:
    fake.add(*healthy(Route("GET", MANIFEST_PATH, [Response(429)] * (ATTEMPTS + 2))))
    assert client.cached_manifest(REGISTRY, REPO, "v1").digest == INDEX.digest
    assert len(fake.requests) == ATTEMPTS + 3
    assert client.pacer(REGISTRY).throttled == ATTEMPTS + 2


def test_429_forever_ends_at_the_deadline(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(*healthy(Route("*", MANIFEST_PATH, Response(429))))
    settings = dataclasses.replace(settings_for(fake.url, tmp_path), rates={REGISTRY: 20.0}, timeout=1.5)
    with RegistryClient(settings) as client, pytest.raises(DeadlinePassed) as caught:
        client.head_manifest(REGISTRY, REPO, "v1")
    # The deadline ended it (429s alone wait forever); that a turn past it is refused at once, not slept
    # for, `pacer_test.py` holds on a fake clock.
    message = str(caught.value)
    assert message.startswith(f"{REGISTRY}: the run's deadline (1.5 s, --timeout) came first; held to ")
    assert "request/s, lowered from 20 after 429s (--rate or policy)" in message
    # Each 429 halved the rate: far fewer requests than 20/s for 1.5 s would have made.
    assert 3 <= len(fake.requests) <= 8


def test_a_registry_slower_than_the_read_timeout(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(*healthy(Route("*", MANIFEST_PATH, Delay(5, manifest_response(*MANIFESTS["v1"])))))
    settings = settings_for(fake.url, tmp_path, read_timeout=0.2)
    with RegistryClient(settings) as client, pytest.raises(RegistryError) as caught:
        client.head_manifest(REGISTRY, REPO, "v1")
    message = str(caught.value)
    assert "no answer within 0.2 s" in message
    assert f"gave up after {ATTEMPTS} attempts" in message
    assert f"/v2/{REPO}/manifests/v1" in message
    assert len(fake.requests) == ATTEMPTS


def token_for(repository: str) -> str:
    return f"token-for-{repository.replace('/', '-')}"


def bearer_auth(fake: FakeRegistry) -> list[Route]:
    """A token endpoint on the fake, and /v2/ answering 401 without that repository's token."""

    def token(request: Request) -> Action:
        scope = request.query["scope"][0]
        body = f'{{"token": "{token_for(scope.split(":")[1])}", "expires_in": 300}}'
        return Response(200, {"Content-Type": "application/json"}, body.encode())

    def gate(request: Request) -> Action | None:
        repository = request.bare_path.removeprefix("/v2/").rpartition("/")[0].rpartition("/")[0]
        if request.headers.get("Authorization") == f"Bearer {token_for(repository)}":
            return None
        realm = f'Bearer realm="{fake.url}/token",service="fake-registry"'
        challenge = f'{realm},scope="repository:{repository}:pull"'
        return Response(401, {"Www-Authenticate": challenge}, b'{"errors":[{"code":"UNAUTHORIZED"}]}')

    return [Route("GET", "/token", token), Route("*", r"/v2/.+", gate)]


@pytest.mark.parametrize("concurrently", [False, True], ids=["one-by-one", "concurrently"])
def test_one_token_per_repository(fake: FakeRegistry, client: RegistryClient, concurrently: bool) -> None:
    tags = ("alpha", "beta", "gamma")  # neither moving nor frozen: no tag listing
    repositories = (REPO, "deep-learning-containers/pytorch")
    images = {(repo, tag): multi_platform(f"{repo}:{tag}") for repo in repositories for tag in tags}
    fake.add(*bearer_auth(fake))
    for repo in repositories:
        fake.add(*serve_manifests(repo, {tag: (images[repo, tag].media_type, images[repo, tag].data) for tag in tags}))
    references = [parse(f"{REGISTRY}/{repo}:{tag}") for repo, tag in images]
    resolver = Resolver(client)
    if concurrently:
        outcomes = resolver.resolve_all(references)
    else:
        outcomes = {ref: resolver.resolve(ref) for ref in references}
    # An error shows as its message, so a failure explains itself.
    found = {str(ref): o.digest if isinstance(o, Resolved) else str(o) for ref, o in outcomes.items()}
    assert found == {f"{REGISTRY}/{repo}:{tag}": image.digest for (repo, tag), image in images.items()}
    scopes = sorted(r.query["scope"][0] for r in fake.requests_to("/token"))
    assert scopes == sorted(f"repository:{repo}:pull" for repo in repositories)


def test_blob_redirected_to_another_host_loses_the_authorization(fake: FakeRegistry, client: RegistryClient) -> None:
    blob = b'{"architecture": "amd64", "os": "linux"}'
    with FakeRegistry([Route("GET", r"/storage/.+", Response(200, body=blob))]) as storage:
        blob_path = rf"/v2/{REPO}/blobs/{digest(blob)}"
        fake.add(
            *bearer_auth(fake),
            Route("GET", blob_path, Redirect(f"{storage.url}/storage/{digest(blob)}?sig=x")),
        )
        assert client.cached_blob(REGISTRY, REPO, digest(blob)) == blob
    authorized = [r for r in fake.requests_to(blob_path) if "Authorization" in r.headers]
    assert [r.headers["Authorization"] for r in authorized] == [f"Bearer {token_for(REPO)}"]
    assert [r.path for r in storage.requests] == [f"/storage/{digest(blob)}?sig=x"]
    assert all("Authorization" not in r.headers for r in storage.requests)


def test_plain_http_mirror_off_loopback_fails_before_any_traffic(outside: list[str], tmp_path: Path) -> None:
    settings = settings_for("http://10.0.0.1:5000", tmp_path)
    with RegistryClient(settings) as client, pytest.raises(PinguardError) as caught:
        client.head_manifest(REGISTRY, REPO, "v1")
    assert "refusing plain HTTP to 10.0.0.1:5000" in str(caught.value)
    assert "--insecure-registry 10.0.0.1:5000" in str(caught.value)
    assert outside == []


BLOB_DIGEST = digest(b"config")


@pytest.mark.parametrize(
    ("location", "complaint", "fetched"),
    [
        ("http://example.invalid/blobs/x", "refusing plain HTTP to example.invalid", 1),
        ("http://example.invalid:5000/x", "refusing plain HTTP to example.invalid:5000", 1),
        ("ftp://127.0.0.1/blobs/x", "refusing to follow ftp://127.0.0.1/blobs/x", 1),
        (f"/v2/{REPO}/blobs/{BLOB_DIGEST}", "more than 5 redirects", 6),
    ],
    ids=["plain-http-off-loopback", "plain-http-with-port", "not-http", "redirect-loop"],
)
def test_redirects_the_client_must_not_follow(
    fake: FakeRegistry,
    client: RegistryClient,
    outside: list[str],
    location: str,
    complaint: str,
    fetched: int,
) -> None:
    fake.add(Route("GET", rf"/v2/{REPO}/blobs/.+", Redirect(location)))
    with pytest.raises(RegistryError, match=complaint):
        client.cached_blob(REGISTRY, REPO, BLOB_DIGEST)
    assert len(fake.requests) == fetched  # refused outright, not retried
    assert outside == []


def test_token_realm_in_plain_http_off_loopback_is_refused(
    fake: FakeRegistry, client: RegistryClient, outside: list[str]
) -> None:
    challenge = 'Bearer realm="http://example.invalid/token",service="fake-registry"'
    fake.add(Route("*", r"/v2/.+", Response(401, {"Www-Authenticate": challenge})))
    with pytest.raises(RegistryError, match=re.escape("refusing token realm 'http://example.invalid/token'")):
        client.head_manifest(REGISTRY, REPO, "v1")
    assert outside == []


def test_a_token_the_registry_stops_accepting_is_fetched_again(fake: FakeRegistry, client: RegistryClient) -> None:
    issued: list[str] = []

    def token(request: Request) -> Action:
        issued.append(f"t{len(issued) + 1}")
        return Response(200, body=f'{{"token": "{issued[-1]}", "expires_in": 300}}'.encode())

    def gate(request: Request) -> Action | None:
        if issued and request.headers.get("Authorization") == f"Bearer {issued[-1]}":
            return None
        challenge = f'Bearer realm="{fake.url}/token",service="fake-registry"'
        challenge += f',scope="repository:{REPO}:pull"'
        if "Authorization" in request.headers:
            challenge += ',error="invalid_token"'  # what distribution says of a token it refuses
        return Response(401, {"Www-Authenticate": challenge})

    fake.add(Route("GET", "/token", token), Route("*", r"/v2/.+", gate), *healthy())
    assert client.head_manifest(REGISTRY, REPO, "v1").digest == INDEX.digest
    issued.append("revoked")  # the registry no longer takes t1, well before its expiry
    assert client.head_manifest(REGISTRY, REPO, "v1").digest == INDEX.digest
    assert len(fake.requests_to("/token")) == 2


def test_cli_reports_a_registry_that_never_recovers(fake: FakeRegistry, tmp_path: Path) -> None:
    # Retry-After: 0 keeps the default backoff of the command line out of the test's time.
    fake.add(Route("*", r"/v2/.*", Response(503, {"Retry-After": "0"})))
    stdout, stderr = io.StringIO(), io.StringIO()
    status = main(
        ["resolve", f"{REGISTRY}/{REPO}:v1", "--mirror", f"{REGISTRY}={fake.url}"],
        env={"PINGUARD_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)},
        stdout=stdout,
        stderr=stderr,
    )
    assert status == 2
    assert stdout.getvalue() == ""
    lines = stderr.getvalue().splitlines()
    assert len(lines) == 1, stderr.getvalue()
    assert lines[0].startswith(f"pinguard: {REGISTRY}/{REPO}:v1: ")
    assert "503" in lines[0]
    assert "gave up after" in lines[0]
    assert "Traceback" not in stderr.getvalue()
