"""One HTTP exchange within bounds, against a real server on loopback: the size cap, the deadline, links followed."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pinguard.errors import DeadlinePassed, RegistryError
from pinguard.registry.bodies import USER_AGENT, BodyTooLarge, connect, fetch, follow
from pinguard.registry.pacer import Deadline
from pinguard.registry.settings import RegistrySettings
from pinguard.registry.wire import Pool
from tests.registry.conftest import REGISTRY, settings_for

BODY = b"x" * 1000


class _Echo(BaseHTTPRequestHandler):
    """Answers every GET with BODY, and the User-Agent it was sent in a header."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.send_header("X-Agent", self.headers.get("User-Agent", ""))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the answers, not the log."""


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v2/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def settings(server: str, tmp_path: Path) -> RegistrySettings:
    return settings_for(server.removesuffix("/v2/"), tmp_path)


def _later(seconds: float = 30.0) -> Deadline:
    return Deadline(time.monotonic() + seconds, seconds)


def test_a_body_within_its_cap_is_read_whole_with_the_user_agent(server: str, settings: RegistrySettings) -> None:
    pool = Pool(max_idle=1)
    try:
        response = fetch(pool, "GET", server, registry=REGISTRY, settings=settings, deadline=_later(),
                         limit=len(BODY), headers={})
    finally:
        pool.close()
    assert (response.status_code, response.content) == (200, BODY)
    assert response.headers.get("X-Agent") == USER_AGENT


def test_a_body_past_its_cap_is_refused_naming_the_cap(server: str, settings: RegistrySettings) -> None:
    pool = Pool(max_idle=1)
    try:
        with pytest.raises(BodyTooLarge, match=f"{server}: response larger than 999 bytes"):
            fetch(pool, "GET", server, registry=REGISTRY, settings=settings, deadline=_later(), limit=999, headers={})
    finally:
        pool.close()


def test_nothing_is_asked_once_the_deadline_has_passed(server: str, settings: RegistrySettings) -> None:
    pool = Pool(max_idle=1)
    try:
        with pytest.raises(DeadlinePassed, match="the run's deadline"):
            fetch(pool, "GET", server, registry=REGISTRY, settings=settings, deadline=_later(-1.0), limit=10,
                  headers={})
        with pytest.raises(DeadlinePassed):
            connect(pool, server, registry=REGISTRY, settings=settings, deadline=_later(-1.0))
    finally:
        pool.close()


def test_connect_leaves_a_connection_ready(server: str, settings: RegistrySettings) -> None:
    pool = Pool(max_idle=1)
    try:
        connect(pool, server, registry=REGISTRY, settings=settings, deadline=_later())
        assert pool.has_idle(server, settings.verify_tls(server.split("/")[2]))
    finally:
        pool.close()


@pytest.mark.parametrize(("link", "url"), [
    ("/v2/app/tags/list?last=b", "https://registry.example/v2/app/tags/list?last=b"),
    ("https://cdn.example/blob", "https://cdn.example/blob"),
    ("list?n=2", "https://registry.example/v2/app/tags/list?n=2"),
])
def test_a_link_is_made_absolute_against_where_it_came_from(link: str, url: str) -> None:
    assert follow("https://registry.example/v2/app/tags/list", link) == url


@pytest.mark.parametrize("link", ["http://[not-ipv6]/x", "https://[::1/"])
def test_a_link_that_is_no_url_is_a_registry_error(link: str) -> None:
    with pytest.raises(RegistryError, match="which is not a URL"):
        follow("https://registry.example/v2/", link)
