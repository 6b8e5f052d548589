"""One registry's HTTP (`pinguard.registry.transport`): retries of failures a retry may mend, none of
those it may not, redirects followed by hand, and a connection opened before the request's turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.errors import RegistryError
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.transport import Transport
from testing.fake_registry import FakeRegistry, Redirect, Response, Route, serve_manifests
from testing.images import multi_platform
from tests.registry.conftest import ATTEMPTS, REGISTRY, settings_for

REPO = "deep-learning-containers/ray"
INDEX = multi_platform("transport")
TAGS = {"v0": (INDEX.media_type, INDEX.data)}
SCOPE = f"repository:{REPO}:pull"


def test_a_server_error_is_retried_until_it_mends(fake: FakeRegistry, transport: Transport) -> None:
    fake.add(Route("GET", "/v2/x", [Response(503), Response(502), Response(200, body=b"ok")]))
    response = transport.request("GET", "/v2/x", scope=SCOPE)
    assert (response.status_code, response.content) == (200, b"ok")
    assert len(fake.requests) == 3


def test_a_server_error_that_never_mends_ends_in_an_error_naming_the_attempts(fake: FakeRegistry,
                                                                              transport: Transport) -> None:
    fake.add(Route("GET", "/v2/x", Response(500)))
    with pytest.raises(RegistryError, match=f"GET {fake.url}/v2/x: 500 .*gave up after {ATTEMPTS} attempts"):
        transport.request("GET", "/v2/x", scope=SCOPE)
    assert len(fake.requests) == ATTEMPTS


@pytest.mark.parametrize("status", [400, 403, 404])
def test_an_answer_no_retry_mends_is_returned_at_once(fake: FakeRegistry, transport: Transport,
                                                      status: int) -> None:
    fake.add(Route("GET", "/v2/x", Response(status)))
    assert transport.request("GET", "/v2/x", scope=SCOPE).status_code == status
    assert len(fake.requests) == 1


def test_a_303_turns_the_request_into_a_get_without_its_body(fake: FakeRegistry, transport: Transport) -> None:
    fake.add(Route("POST", "/v2/x", Response(303, {"Location": "/v2/y"})),
             Route("GET", "/v2/y", Response(200, body=b"there")))
    assert transport.request("POST", "/v2/x", scope=SCOPE, data=b"payload").content == b"there"
    assert [(r.method, r.path, r.body) for r in fake.requests] == [("POST", "/v2/x", b"payload"),
                                                                    ("GET", "/v2/y", b"")]


def test_a_redirect_to_another_scheme_is_refused(fake: FakeRegistry, transport: Transport) -> None:
    fake.add(Route("GET", "/v2/x", Redirect("file:///etc/passwd")))
    with pytest.raises(RegistryError, match="refusing to follow file:///etc/passwd"):
        transport.request("GET", "/v2/x", scope=SCOPE)


def test_requests_go_out_as_anonymous_without_credentials(transport: Transport) -> None:
    assert transport.identity() == "anonymous"


def test_a_paced_request_has_its_connection_open_before_it_waits_for_its_turn(fake: FakeRegistry,
                                                                               tmp_path: Path) -> None:
    # A handshake after the turn would send the request late, and the next one, on a connection already
    # open, too soon after it: two requests closer than the quota allows.
    fake.add(*serve_manifests(REPO, TAGS))
    with RegistryClient(settings_for(fake.url, tmp_path), RegistryCache(None)) as client:
        transport = client.transport(REGISTRY)
        pacer = transport.pacer
        open_at_turn = []
        take_turn = pacer._take_turn

        def turn() -> float:
            open_at_turn.append(transport._pool.has_idle(fake.url + "/v2/"))
            return take_turn()

        pacer._take_turn = turn  # type: ignore[method-assign]
        client.head_manifest(REGISTRY, REPO, "v0")
    assert open_at_turn == [True]
