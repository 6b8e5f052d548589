"""The latency proxy the benchmark puts between pinguard and a registry."""

from __future__ import annotations

import socketserver
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from pinguard.registry.client import RegistryClient
from pinguard.registry.settings import RegistrySettings, RetryPolicy
from testing.fake_registry import (
    Action,
    FakeRegistry,
    Redirect,
    Request,
    Response,
    Route,
    serve_manifests,
)
from testing.images import multi_platform
from testing.proxy import LatencyProxy, Quota, kind_of
from testing.registry import make_tls
from testing.token_server import TokenServer

REPO = "deep-learning-containers/ray"
IMAGE = multi_platform("proxy")
DELAY = 0.05


def fetch(method: str, url: str, **kwargs: Any) -> requests.Response:
    """One request straight to `url`: no proxy from the environment, no redirect followed."""
    with requests.Session() as session:
        session.trust_env = False
        return session.request(method, url, allow_redirects=False, timeout=5, **kwargs)


@pytest.fixture
def upstream() -> Iterator[FakeRegistry]:
    with FakeRegistry(serve_manifests(REPO, {"v1": (IMAGE.media_type, IMAGE.data)})) as fake:
        yield fake


@pytest.fixture
def proxy(upstream: FakeRegistry) -> Iterator[LatencyProxy]:
    with LatencyProxy(upstream.url, delay=DELAY) as started:
        yield started


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/v2/", "ping"),
        ("/v2", "ping"),
        (f"/v2/{REPO}/manifests/v1", "manifest"),
        (f"/v2/{REPO}/manifests/{IMAGE.digest}", "manifest"),
        (f"/v2/{REPO}/blobs/{IMAGE.digest}", "blob"),
        (f"/v2/{REPO}/tags/list?last=a&n=2", "tags"),
        ("/__token/token?scope=repository:x:pull", "token"),
        ("/token?service=x", "token"),
        ("/v2/_catalog", "other"),
        ("/healthz", "other"),
    ],
)
def test_kind_of(path: str, kind: str) -> None:
    assert kind_of(path) == kind


@pytest.mark.parametrize(
    ("method", "path", "status", "body"),
    [
        ("GET", f"/v2/{REPO}/manifests/v1", 200, IMAGE.data),
        ("HEAD", f"/v2/{REPO}/manifests/v1", 200, b""),
        ("GET", f"/v2/{REPO}/manifests/v9", 404, None),
        ("GET", f"/v2/{REPO}/tags/list", 200, None),
    ],
)
def test_forwards_unchanged_after_two_delays(
    upstream: FakeRegistry,
    proxy: LatencyProxy,
    method: str,
    path: str,
    status: int,
    body: bytes | None,
) -> None:
    direct = fetch(method, upstream.url + path)
    started = time.monotonic()
    proxied = fetch(method, proxy.url + path, headers={"X-Probe": "1"})
    assert time.monotonic() - started >= 2 * DELAY
    assert proxied.status_code == direct.status_code == status
    assert proxied.content == direct.content
    if body is not None:
        assert proxied.content == body
    for header in ("Content-Type", "Content-Length", "Docker-Content-Digest", "Link"):
        assert proxied.headers.get(header) == direct.headers.get(header)
    assert upstream.requests[-1].path == path
    assert upstream.requests[-1].headers["X-Probe"] == "1"


def test_counts_by_method_and_kind(upstream: FakeRegistry, proxy: LatencyProxy) -> None:
    for method, path in [
        ("GET", "/v2/"),
        ("HEAD", f"/v2/{REPO}/manifests/v1"),
        ("GET", f"/v2/{REPO}/manifests/v1"),
        ("GET", f"/v2/{REPO}/manifests/{IMAGE.digest}"),
        ("GET", f"/v2/{REPO}/tags/list"),
    ]:
        fetch(method, proxy.url + path)
    assert proxy.counts == Counter(
        {("GET", "ping"): 1, ("HEAD", "manifest"): 1, ("GET", "manifest"): 2, ("GET", "tags"): 1}
    )
    proxy.reset()
    assert proxy.counts == Counter()


def test_forwards_request_bodies(upstream: FakeRegistry, proxy: LatencyProxy) -> None:
    upstream.add(Route("POST", "/token", Response(200, body=b'{"token": "t"}')))
    answer = fetch("POST", proxy.url + "/token", data={"grant_type": "refresh_token"})
    assert answer.json() == {"token": "t"}
    assert upstream.requests[-1].body == b"grant_type=refresh_token"
    assert proxy.counts == Counter({("POST", "token"): 1})


def test_redirects_are_passed_back_not_followed(upstream: FakeRegistry, proxy: LatencyProxy) -> None:
    upstream.add(
        Route("GET", "/v2/here", Redirect(f"{upstream.url}/v2/there?x=1")),
        Route("GET", "/v2/away", Redirect("https://storage.example/blob")),
        Route("GET", "/v2/next-port", Redirect(f"{upstream.url}0/blob")),
    )
    assert fetch("GET", proxy.url + "/v2/here").headers["Location"] == f"{proxy.url}/v2/there?x=1"
    assert fetch("GET", proxy.url + "/v2/away").headers["Location"] == "https://storage.example/blob"
    assert fetch("GET", proxy.url + "/v2/next-port").headers["Location"] == f"{upstream.url}0/blob"  # another server
    assert [r.path for r in upstream.requests] == ["/v2/here", "/v2/away", "/v2/next-port"]


def test_token_server_behind_the_prefix(tmp_path: Path) -> None:
    """pinguard through the proxy: the challenge's realm is rewritten, so tokens pass it too."""
    with (
        FakeRegistry([Route("GET", "/token", Response(200, body=b'{"token": "t"}'))]) as tokens,
        FakeRegistry() as registry,
    ):
        challenge = f'Bearer realm="{tokens.url}/token",service="fake"'

        def gate(request: Request) -> Action | None:
            if request.headers.get("Authorization") == "Bearer t":
                return None
            return Response(401, {"Www-Authenticate": challenge})

        registry.add(
            Route("*", r"/v2/.*", gate),
            *serve_manifests(REPO, {"v1": (IMAGE.media_type, IMAGE.data)}),
        )
        with LatencyProxy(registry.url, delay=0.01, token_url=tokens.url) as proxy:
            settings = RegistrySettings(
                mirrors={"public.ecr.aws": proxy.url},
                retry=RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.05, budget=5),
                env={"HOME": str(tmp_path)},
            )
            with RegistryClient(settings) as client:
                for _ in range(3):
                    assert client.cached_manifest("public.ecr.aws", REPO, "v1").digest == IMAGE.digest
            assert proxy.counts == Counter({("GET", "manifest"): 4, ("GET", "token"): 1})
            rewritten = fetch("GET", f"{proxy.url}/v2/").headers["Www-Authenticate"]
        assert rewritten == f'Bearer realm="{proxy.url}/__token/token",service="fake"'
        assert [r.bare_path for r in tokens.requests] == ["/token"]
        assert tokens.requests[0].query["scope"] == [f"repository:{REPO}:pull"]


def test_https_upstream_is_verified_against_the_ca_file(tmp_path: Path) -> None:
    tls = make_tls(tmp_path / "tls")
    with TokenServer(cert_file=str(tls.cert_file), key_file=str(tls.key_file)) as server:
        with LatencyProxy(server.url, delay=0.0, ca_file=str(tls.ca_file)) as trusting:
            answer = fetch("GET", f"{trusting.url}/token?scope=repository:{REPO}:pull")
            assert answer.status_code == 200
            assert answer.json()["token"].count(".") == 2  # a JWT
        with LatencyProxy(server.url, delay=0.0) as untrusting:
            refused = fetch("GET", f"{untrusting.url}/token")
            assert refused.status_code == 502
            assert "SSLError" in refused.text


def test_upstream_down_is_a_502() -> None:
    with LatencyProxy("http://127.0.0.1:9", delay=0.0) as proxy:
        answer = fetch("GET", proxy.url + "/v2/")
    assert answer.status_code == 502
    assert proxy.counts == Counter({("GET", "ping"): 1})


class _ChunkedUpstream(socketserver.ThreadingTCPServer):
    """Answers with a chunked body of unknown length, as distribution does for tags/list."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ChunkedHandler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


class _ChunkedHandler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # the request itself does not matter
        self.wfile.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            b'Connection: close\r\n\r\n6\r\n{"tags\r\n9\r\n": ["a"]}\r\n0\r\n\r\n'
        )


def test_bodies_of_unknown_length_are_streamed_chunked() -> None:
    server = _ChunkedUpstream()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        with LatencyProxy(server.url, delay=0.0) as proxy:
            answer = fetch("GET", f"{proxy.url}/v2/{REPO}/tags/list")
    finally:
        server.shutdown()
        server.server_close()
    assert answer.status_code == 200
    assert answer.headers["Transfer-Encoding"] == "chunked"
    assert answer.json() == {"tags": ["a"]}


def test_the_quota_refuses_a_request_before_its_turn_and_forgives_only_the_lateness_it_is_given() -> None:
    strict, forgiving = Quota(rate=1.0), Quota(rate=1.0, lateness=0.3)
    start = time.monotonic()
    assert strict.admit(start) and forgiving.admit(start)  # full at the start
    assert not strict.admit(start + 0.8)
    assert forgiving.admit(start + 0.8)  # 0.2 s early: a thread woken late for the one before
    assert not forgiving.admit(start + 0.9)  # the bucket is in debt now: early again is refused
    assert forgiving.admit(start + 2.0)
