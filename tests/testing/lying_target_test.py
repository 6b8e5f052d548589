"""The lying copy target (`testing.lying_target`) in front of a FAKE registry: each lie told as documented, and
nothing else changed."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from testing.fake_registry import FakeRegistry, Response, Route, digest
from testing.lying_target import Lies, LyingProxy

X, Y = b"the blob", b"another!"
BLOBS = {digest(X): X, digest(Y): Y}


@pytest.fixture
def liar() -> Iterator[LyingProxy]:
    with FakeRegistry() as fake, LyingProxy(fake.url) as proxy:
        for blob, data in BLOBS.items():
            fake.add(Route("*", f"/v2/team/a/blobs/{blob}", Response(200, {"Docker-Content-Digest": blob}, data)))
        fake.add(Route("*", "/v2/.*", Response(500)))  # anything else: the test would see the upstream was asked
        yield proxy


def ask(method: str, url: str, data: bytes | None = None) -> requests.Response:
    with requests.Session() as session:
        session.trust_env = False
        return session.request(method, url, data=data, allow_redirects=False, timeout=10)


def test_an_honest_target_passes_everything_through(liar: LyingProxy) -> None:
    head = ask("HEAD", f"{liar.url}/v2/team/a/blobs/{digest(X)}")
    assert (head.status_code, head.headers["Docker-Content-Digest"], head.headers["Content-Length"]) == (
        200, digest(X), str(len(X)))
    assert ask("GET", f"{liar.url}/v2/team/a/blobs/{digest(X)}").content == X


def test_each_lie_as_documented(liar: LyingProxy) -> None:
    blob = f"{liar.url}/v2/team/a/blobs/{digest(X)}"
    liar.lies = Lies(bare_heads=True)
    head = ask("HEAD", blob)
    assert head.status_code == 200
    assert "Content-Length" not in head.headers and "Docker-Content-Digest" not in head.headers

    liar.lies = Lies(swapped={digest(X): digest(Y)})
    assert ask("GET", blob).content == Y
    assert ask("HEAD", blob).headers["Docker-Content-Digest"] == digest(X)  # the HEAD stays true

    liar.lies = Lies(redirected={digest(X): "http://127.0.0.1:9/elsewhere"})
    assert [(r.status_code, r.headers["Location"]) for r in (ask("GET", blob), ask("HEAD", blob))] == [
        (307, "http://127.0.0.1:9/elsewhere")] * 2

    liar.lies = Lies(dropped=frozenset({"blob", "manifest"}))
    put = ask("PUT", f"{liar.url}/v2/team/a/blobs/uploads/u1?_state=s&digest={digest(X)}", X)
    assert (put.status_code, put.headers["Docker-Content-Digest"]) == (201, digest(X))
    put = ask("PUT", f"{liar.url}/v2/team/a/manifests/v1", b"{}")
    assert (put.status_code, put.headers["Docker-Content-Digest"]) == (201, digest(b"{}"))
    assert ask("GET", f"{liar.url}/v2/team/a/manifests/v1").status_code == 500  # never stored: the upstream asked
