"""Authentication paths a real test registry does not offer: Basic, identity tokens, ECR via boto3."""
from __future__ import annotations

import base64
import json
import re
import sys
import types
from pathlib import Path

import pytest

from pinguard.errors import RegistryError
from pinguard.reference import parse
from pinguard.registry.auth import Authenticator, TokenCache
from pinguard.registry.cache import RegistryCache
from pinguard.registry.challenge import Challenge
from pinguard.registry.client import RegistryClient
from pinguard.registry.credentials import CredentialStore
from pinguard.registry.settings import RegistrySettings
from pinguard.resolve.resolver import Resolver
from testing.fake_registry import FakeRegistry, Request, Response, Route, serve_manifests
from testing.images import image

REPO = "team/model"
IMAGE = image(seed="auth")
MANIFESTS = {"v1": (IMAGE.media_type, IMAGE.data)}
BLOBS = {blob.digest: blob.data for blob in IMAGE.blobs}


def _basic(user: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()


def _docker_config(home: Path, registry: str, entry: dict[str, str]) -> dict[str, str]:
    (home / ".docker").mkdir(parents=True, exist_ok=True)
    (home / ".docker" / "config.json").write_text(json.dumps({"auths": {registry: entry}}))
    return {"HOME": str(home), "DOCKER_CONFIG": str(home / ".docker")}


def _guarded(expected: str, challenge: str) -> Route:
    """Refuse, with `challenge`, every /v2/ request that lacks Authorization `expected`."""
    def check(request: Request) -> Response | None:
        if request.headers.get("Authorization") == expected:
            return None  # let the registry routes answer
        return Response(401, {"Www-Authenticate": challenge}, b"")

    return Route("*", r"/v2/.*", check)


def _resolve(fake: FakeRegistry, env: dict[str, str], cache: Path | None = None) -> str:
    settings = RegistrySettings(mirrors={"registry.example.com": fake.url}, env=env)
    with RegistryClient(settings, RegistryCache(cache)) as client:
        return Resolver(client).resolve(parse(f"registry.example.com/{REPO}:v1")).digest


def test_basic_auth_from_docker_config(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(_guarded(_basic("alice", "s3cret"), 'Basic realm="registry"'),
             *serve_manifests(REPO, MANIFESTS, blobs=BLOBS))
    env = _docker_config(tmp_path, fake.host, {"auth": base64.b64encode(b"alice:s3cret").decode()})
    assert _resolve(fake, env) == IMAGE.digest


def test_basic_auth_without_credentials_says_what_to_do(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(_guarded(_basic("alice", "s3cret"), 'Basic realm="registry"'))
    with pytest.raises(RegistryError, match="asks for a user name and password, and none is configured"):
        _resolve(fake, {"HOME": str(tmp_path)})


def test_identity_token_is_exchanged_with_a_refresh_grant(fake: FakeRegistry, tmp_path: Path) -> None:
    def token(request: Request) -> Response:
        form = dict(pair.split("=", 1) for pair in request.body.decode().split("&"))
        if form.get("grant_type") == "refresh_token" and form.get("refresh_token") == "refresh-me":
            return Response(200, {"Content-Type": "application/json"}, b'{"access_token": "granted"}')
        return Response(401, {}, b"")

    realm = f'Bearer realm="{fake.url}/token",service="registry.example.com"'
    fake.add(Route("POST", "/token", token), _guarded("Bearer granted", realm),
             *serve_manifests(REPO, MANIFESTS, blobs=BLOBS))
    env = _docker_config(tmp_path, fake.host, {"identitytoken": "refresh-me"})
    assert _resolve(fake, env) == IMAGE.digest
    assert all("refresh-me" not in r.path for r in fake.requests)  # never in a URL


def test_head_without_digest_header_falls_back_to_hashing_the_body(fake: FakeRegistry, tmp_path: Path) -> None:
    def head_without_digest(request: Request) -> Response:
        return Response(200, {"Content-Type": IMAGE.media_type}, b"")

    fake.add(Route("HEAD", rf"/v2/{REPO}/manifests/v1", head_without_digest),
             *serve_manifests(REPO, MANIFESTS, blobs=BLOBS))
    assert _resolve(fake, {}, tmp_path / "cache") == IMAGE.digest  # a tag never seen: GET
    assert _resolve(fake, {}, tmp_path / "cache") == IMAGE.digest  # seen: HEAD, which says nothing, then GET
    assert [r.method for r in fake.requests_to(rf"/v2/{REPO}/manifests/v1")] == ["GET", "HEAD", "GET"]


def _fake_boto3(monkeypatch: pytest.MonkeyPatch, calls: list[tuple[str, str]]) -> None:
    """A FAKE boto3 module: `client(service).get_authorization_token()` as ECR answers it."""
    token = base64.b64encode(b"AWS:ecr-password").decode()

    class FakeClient:
        def __init__(self, service: str, region_name: str) -> None:
            calls.append((service, region_name))
            self.service = service

        def get_authorization_token(self) -> dict[str, object]:
            data = {"authorizationToken": token}
            return {"authorizationData": [data] if self.service == "ecr" else data}

    module = types.ModuleType("boto3")
    module.client = FakeClient  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "boto3", module)


def test_private_ecr_token_through_boto3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []
    _fake_boto3(monkeypatch, calls)
    found = CredentialStore({"HOME": str(tmp_path)}).lookup("123456789012.dkr.ecr.eu-west-1.amazonaws.com")
    assert found is not None and (found.username, found.secret) == ("AWS", "ecr-password")
    assert calls == [("ecr", "eu-west-1")]


def test_ecr_public_uses_aws_only_when_credentials_exist(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []
    _fake_boto3(monkeypatch, calls)
    assert CredentialStore({"HOME": str(tmp_path)}).lookup("public.ecr.aws") is None
    found = CredentialStore({"HOME": str(tmp_path), "AWS_PROFILE": "ml"}).lookup("public.ecr.aws")
    assert found is not None and found.secret == "ecr-password"
    assert calls == [("ecr-public", "us-east-1")]


def test_ecr_public_with_aws_credentials_is_paced_at_ten_a_second(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []
    _fake_boto3(monkeypatch, calls)
    anonymous = RegistrySettings(env={"HOME": str(tmp_path)})
    with RegistryClient(anonymous) as client:
        assert client.pacer("public.ecr.aws").rate == 1.0
        assert client.held_to("public.ecr.aws") == ("held to 1 request/s "
                                                    "(anonymous: AWS credentials raise ECR Public's quota to 10/s)")
        assert client.pacer("registry.example.com").rate is None  # no limit until a 429 says otherwise
    authenticated = RegistrySettings(env={"HOME": str(tmp_path), "AWS_PROFILE": "ml"})
    with RegistryClient(authenticated) as client:
        assert client.pacer("public.ecr.aws").rate == 10.0
        assert client.held_to("public.ecr.aws") == "held to 10 request/s (credentials from AWS ecr-public)"
    assert calls == [("ecr-public", "us-east-1")]  # asked once, when the registry was first reached


def test_one_token_covers_every_repository_unless_the_registry_refuses_it(fake: FakeRegistry) -> None:
    """A FAKE token service that grants one scope per token, as some registries do: a token asked
    for several scopes is refused for all but the first, and pinguard then asks scope by scope."""
    repositories = ("team/a", "team/b", "team/c")

    def token(request: Request) -> Response:
        scopes = request.query["scope"]
        return Response(200, {"Content-Type": "application/json"}, json.dumps({"token": scopes[0]}).encode())

    def guard(request: Request) -> Response | None:
        repository = re.sub(r"^/v2/(.+)/(manifests|blobs|tags)/.*$", r"\1", request.bare_path)
        if request.headers.get("Authorization") == f"Bearer repository:{repository}:pull":
            return None
        realm = f'Bearer realm="{fake.url}/token",service="registry.example.com"'
        return Response(401, {"Www-Authenticate": realm}, b"")

    fake.add(Route("GET", "/token", token), Route("*", r"/v2/.+", guard),
             *[route for name in repositories for route in serve_manifests(name, MANIFESTS, blobs=BLOBS)])
    settings = RegistrySettings(mirrors={"registry.example.com": fake.url}, workers=1)
    references = [parse(f"registry.example.com/{name}:v1") for name in repositories]
    with RegistryClient(settings, RegistryCache(None)) as client:
        outcomes = Resolver(client).resolve_all(references)
    assert all(not isinstance(outcome, Exception) for outcome in outcomes.values()), outcomes
    asked = [request.query["scope"] for request in fake.requests_to("/token")]
    # First all three at once; refused for b, then one at a time.
    assert asked[0] == [f"repository:{name}:pull" for name in repositories]
    assert all(len(scopes) == 1 for scopes in asked[1:]) and len(asked) == 3


def test_a_late_401_to_an_older_token_keeps_the_one_fetched_since() -> None:
    """Requests sent with a token the registry refuses are answered 401 one after another: the first drops it and
    a new one is fetched; the later ones (sent with the old token too) must not drop the new one."""
    fetched: list[list[str]] = []

    def fetch(scopes: list[str]) -> tuple[str, float]:
        fetched.append(scopes)
        return f"token-{len(fetched)}", 300.0

    # Nothing here reaches a network: the token fetch is replaced.
    auth = Authenticator("registry.example.com", None, RegistrySettings(), TokenCache(), lambda: None, None, None)
    auth._fetch_token = fetch
    challenge = Challenge("bearer", {"realm": "https://auth.example.com/token", "service": "registry.example.com"})
    scope = "repository:team/a:pull"
    auth.learn(challenge, scope, refused=None)  # the first 401, to a request sent without a token
    old = auth.header(scope)
    auth.learn(challenge, scope, refused=old)  # the registry refuses it
    new = auth.header(scope)
    assert (old, new) == ("Bearer token-1", "Bearer token-2")
    auth.learn(challenge, scope, refused=old)  # a late 401 to another request sent with the old token
    auth.learn(challenge, scope, refused=None)  # and one to a request sent before any token
    assert auth.header(scope) == new and len(fetched) == 2
