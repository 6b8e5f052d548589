"""A registry that attacks the client: answers dripped a byte at a time, waits without end, JSON nested
past any parser, headers no parser expects, tag lists without end, a mirror URL that carries a secret.

Registries are `testing.fake_registry` on loopback, reached through `--mirror`; every command runs
through `pinguard.cli.main`, as a user would. Each ends in a handled outcome: the right answer, or
exit 2 with one line that says what happened, and never a traceback. Times asserted are bounds on a
hang (several times the deadline), not measures of speed.
"""
from __future__ import annotations

import io
import json
import socket
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.errors import RegistryError
from pinguard.registry.client import RegistryClient
from testing.costs import peak_memory
from testing.fake_registry import (
    Action,
    Drip,
    FakeRegistry,
    Redirect,
    Request,
    Response,
    Route,
    digest,
    serve_manifests,
)
from testing.images import image
from tests.registry.conftest import settings_for

REGISTRY = "public.ecr.aws"
REPO = "team/model"
IMAGE = image(seed="hostile-registry")
BLOBS = {blob.digest: blob.data for blob in IMAGE.blobs}
FROZEN = f"{REGISTRY}/{REPO}:v1.0.0"  # a frozen tag: resolved without listing tags
MOVING = f"{REGISTRY}/{REPO}:v1"  # a moving tag: its frozen alias is looked for in the tag list
MANIFESTS = rf"/v2/{REPO}/manifests/.*"
TAGS = rf"/v2/{REPO}/tags/list"
DEADLINE = 3.0
FOREVER = Response(200, {"X-Pad": "a" * 60_000})  # headers that take an hour at a byte every 50 ms
DEEP = {"array": b"[" * 100_000, "object": b'{"a":' * 5_000}


def healthy(*faults: Route) -> list[Route]:
    """`faults` first, then a registry serving IMAGE as v1.0.0 and v1."""
    manifests = {"v1.0.0": (IMAGE.media_type, IMAGE.data), "v1": (IMAGE.media_type, IMAGE.data)}
    return [*faults, *serve_manifests(REPO, manifests, blobs=BLOBS)]


def resolve(url: str, home: Path, *refs: str, timeout: float = 60) -> tuple[int, str, list[str], float]:
    """`pinguard resolve` through the mirror at `url`: status, stdout, stderr's lines, seconds taken."""
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    status = main(["resolve", "--timeout", f"{timeout:g}", "--mirror", f"{REGISTRY}={url}",
                   "--rate", f"{REGISTRY}=1000", *refs],
                  env={"HOME": str(home), "PINGUARD_CACHE_DIR": str(home / "cache")}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue().splitlines(), time.monotonic() - started


def assert_one_line(status: int, lines: list[str], *expected: str) -> None:
    assert status == 2
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    for part in expected:
        assert part in lines[0], lines[0]


# The run's deadline holds inside a request: a byte now and then keeps no request alive past it.

@pytest.mark.parametrize("drip", [
    pytest.param(Drip(FOREVER, interval=0.05, head=True), id="headers"),
    pytest.param(Drip(Response(200, {"Content-Type": IMAGE.media_type}, IMAGE.data * 50), interval=0.05), id="body"),
])
def test_a_dripped_answer_ends_at_the_deadline(tmp_path: Path, drip: Drip) -> None:
    with FakeRegistry(healthy(Route("GET", MANIFESTS, drip))) as fake:
        status, out, lines, took = resolve(fake.url, tmp_path, FROZEN, timeout=DEADLINE)
    assert_one_line(status, lines, f"the run's deadline ({DEADLINE:g} s, --timeout) came while {fake.host} "
                                   "was still answering", "1 of 1 references left unresolved")
    assert out == ""
    assert took < 3 * DEADLINE


def test_headers_dripped_well_before_the_deadline_are_cut_at_the_request_limit(tmp_path: Path) -> None:
    """Headers come within the connect and read timeouts of asking (0.5 s each here), however they trickle."""
    with FakeRegistry([Route("GET", MANIFESTS, Drip(FOREVER, interval=0.05, head=True))]) as fake, \
            RegistryClient(settings_for(fake.url, tmp_path)) as client, \
            pytest.raises(RegistryError, match="no complete answer within 1 s"):
        client.fresh_manifest(REGISTRY, REPO, "v1")


def test_a_token_endpoint_that_drips_ends_at_the_deadline(tmp_path: Path) -> None:
    with FakeRegistry() as fake:
        challenge = f'Bearer realm="{fake.url}/token",service="fake"'
        fake.add(Route("GET", "/token", Drip(FOREVER, interval=0.05, head=True)),
                 Route("*", r"/v2/.*", Response(401, {"Www-Authenticate": challenge})))
        status, _, lines, took = resolve(fake.url, tmp_path, FROZEN, timeout=DEADLINE)
    assert_one_line(status, lines, f"the run's deadline ({DEADLINE:g} s, --timeout) came while {fake.host}")
    assert took < 3 * DEADLINE


class TrickleServer:
    """Accepts TCP connections and answers each with a TLS record header announcing 16 KiB, then a
    byte every 50 ms: a handshake that never completes, though bytes keep coming."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> TrickleServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._closed.set()
        self._listener.close()

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._trickle, args=(connection,), daemon=True).start()

    def _trickle(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.recv(65536)  # the ClientHello
                connection.sendall(b"\x16\x03\x03\x40\x00")
                while not self._closed.wait(0.05):
                    connection.sendall(b"\x00")
            except OSError:
                return


def test_a_tls_handshake_that_trickles_ends_at_the_deadline(tmp_path: Path) -> None:
    with TrickleServer() as server:
        status, _, lines, took = resolve(f"https://127.0.0.1:{server.port}", tmp_path, FROZEN, timeout=DEADLINE)
    assert_one_line(status, lines, f"the run's deadline ({DEADLINE:g} s, --timeout) came while 127.0.0.1:")
    assert took < 3 * DEADLINE


@pytest.mark.parametrize("after", ["999999999999", "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_a_429_that_asks_to_wait_past_the_deadline_ends_at_once(tmp_path: Path, after: str) -> None:
    with FakeRegistry([Route("*", r"/v2/.*", Response(429, {"Retry-After": after}))]) as fake:
        status, _, lines, took = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, "the run's deadline (60 s, --timeout) came first")
    assert took < 10  # refused as soon as the wait was known to pass the deadline, not slept


def test_a_503_that_asks_to_wait_past_the_deadline_ends_at_once(tmp_path: Path) -> None:
    with FakeRegistry([Route("*", r"/v2/.*", Response(503, {"Retry-After": "20"}))]) as fake:
        status, _, lines, took = resolve(fake.url, tmp_path, FROZEN, timeout=10)
    assert_one_line(status, lines, "the run's deadline (10 s, --timeout) came before GET ",
                    "could be tried again (503 Service Unavailable)")
    assert took < 5


def test_a_redirect_loop_ends(tmp_path: Path) -> None:
    with FakeRegistry() as fake:
        fake.add(Route("*", MANIFESTS, Redirect(f"{fake.url}/v2/{REPO}/manifests/v1.0.0")))
        status, _, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, "more than 5 redirects")
    assert len(fake.requests_to(MANIFESTS)) == 6


# JSON nested deeper than any parser recurses: one line, never a RecursionError.

@pytest.mark.parametrize("shape", DEEP)
def test_a_deeply_nested_manifest(tmp_path: Path, shape: str) -> None:
    deep = Response(200, {"Content-Type": IMAGE.media_type}, DEEP[shape])
    with FakeRegistry(healthy(Route("GET", MANIFESTS, deep))) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, "is not valid JSON: JSON nested too deeply")


@pytest.mark.parametrize("shape", DEEP)
def test_a_deeply_nested_error_body(tmp_path: Path, shape: str) -> None:
    deep = Response(404, {"Content-Type": "application/json"}, DEEP[shape])
    with FakeRegistry([Route("*", r"/v2/.*", deep)]) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, f"{REGISTRY}/{REPO}: repository not found")


@pytest.mark.parametrize("shape", DEEP)
def test_a_deeply_nested_tag_list(tmp_path: Path, shape: str) -> None:
    with FakeRegistry(healthy(Route("GET", TAGS, Response(200, {}, DEEP[shape])))) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, MOVING)
    assert_one_line(status, lines, f"{MOVING}: {REGISTRY}/{REPO}: ")
    assert "tags list is not JSON" in lines[0] or "the tag list is longer than pinguard reads" in lines[0]


@pytest.mark.parametrize("shape", DEEP)
def test_a_deeply_nested_token_answer(tmp_path: Path, shape: str) -> None:
    with FakeRegistry() as fake:
        challenge = f'Bearer realm="{fake.url}/token",service="fake"'
        fake.add(Route("GET", "/token", Response(200, {}, DEEP[shape])),
                 Route("*", r"/v2/.*", Response(401, {"Www-Authenticate": challenge})))
        status, _, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, "the token endpoint did not answer JSON with a token")


@pytest.mark.parametrize("shape", DEEP)
def test_a_deeply_nested_image_config(tmp_path: Path, shape: str) -> None:
    config = DEEP[shape]
    document = json.loads(IMAGE.data)
    document["config"] = {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest(config),
                          "size": len(config)}
    manifest = json.dumps(document).encode()
    routes = serve_manifests(REPO, {"v1.0.0": (IMAGE.media_type, manifest)}, blobs={digest(config): config})
    with FakeRegistry(routes) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, f"image config {digest(config)} is not JSON")


# Headers no parser expects.

@pytest.mark.parametrize("after", ["²", "٣", "1e3", "-1", "Mon, 01 Jan 99999999999999999999 00:00:00 GMT",
                                   "Mon, 99 Jan 2020 00:00:00 GMT"])
@pytest.mark.parametrize("status", [429, 503])
def test_a_retry_after_no_parser_expects_is_no_retry_after(tmp_path: Path, after: str, status: int) -> None:
    with FakeRegistry(healthy(Route("*", MANIFESTS, [Response(status, {"Retry-After": after})]))) as fake:
        code, out, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert (code, lines) == (0, [])
    assert IMAGE.digest in out


@pytest.mark.parametrize("length", ["²", "-1", " 7 ", "9" * 30, "0x10"])
def test_a_content_length_no_parser_expects_on_a_head(tmp_path: Path, length: str) -> None:
    """A tag seen before is asked by HEAD, whose Content-Length is only a size to note."""
    headers = {"Docker-Content-Digest": IMAGE.digest, "Content-Type": IMAGE.media_type, "Content-Length": length}
    with FakeRegistry(healthy()) as fake:
        assert resolve(fake.url, tmp_path, FROZEN)[0] == 0  # the cache now knows the tag
        fake.routes.insert(0, Route("HEAD", MANIFESTS, Response(200, headers)))
        status, out, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert (status, lines) == (0, [])
    assert IMAGE.digest in out


@pytest.mark.parametrize("length", ["²", "-1", "9" * 30])
def test_a_body_with_a_content_length_no_parser_expects(tmp_path: Path, length: str) -> None:
    """Without a length to trust, the body ends where the connection does; one promising more than
    came is a dropped answer, asked again."""
    headers = {"Content-Type": IMAGE.media_type, "Content-Length": length, "Connection": "close"}
    with FakeRegistry(healthy(Route("GET", MANIFESTS, [Response(200, headers, IMAGE.data)]))) as fake:
        status, out, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert (status, lines) == (0, [])
    assert IMAGE.digest in out


def test_a_body_with_two_lengths_is_refused(tmp_path: Path) -> None:
    headers = {"Content-Type": IMAGE.media_type, "Content-Length": "1, 2"}
    with FakeRegistry(healthy(Route("GET", MANIFESTS, Response(200, headers, IMAGE.data)))) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, "InvalidHeader")


@pytest.mark.parametrize("header", ["sha256:" + "²" * 64, "sha256:" + "a" * 60_000, "shake_128:" + "a" * 64,
                                    f"{IMAGE.digest}, {IMAGE.digest}", "sha256:../../etc/passwd"])
def test_a_digest_header_no_parser_expects(tmp_path: Path, header: str) -> None:
    headers = {"Content-Type": IMAGE.media_type, "Docker-Content-Digest": header}
    with FakeRegistry(healthy(Route("GET", MANIFESTS, Response(200, headers, IMAGE.data)))) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, "the registry sent a malformed digest")
    assert len(lines[0]) < 300  # not echoed whole


@pytest.mark.parametrize("location", ["http://[::1", "http://127.0.0.1:99999999/x", "http://[fe80::1%zz]:1/"])
def test_a_redirect_to_no_url(tmp_path: Path, location: str) -> None:
    with FakeRegistry(healthy(Route("GET", MANIFESTS, Response(302, {"Location": location})))) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, f"{FROZEN}: ")


@pytest.mark.parametrize("realm", ["http://[::1", "http://127.0.0.1:99999999/token", "https://", "file:///etc"])
def test_a_token_realm_that_is_no_url(tmp_path: Path, realm: str) -> None:
    challenge = f'Bearer realm="{realm}",service="fake"'
    with FakeRegistry([Route("*", r"/v2/.*", Response(401, {"Www-Authenticate": challenge}))]) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, FROZEN)
    assert_one_line(status, lines, f"{FROZEN}: {REGISTRY}: ")


def test_a_next_page_that_is_no_url(tmp_path: Path) -> None:
    page = Response(200, {"Link": '<http://[::1/v2/x>; rel="next"'}, b'{"tags": ["v1.0.0"]}')
    with FakeRegistry(healthy(Route("GET", TAGS, page))) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, MOVING)
    assert_one_line(status, lines, "the registry pointed to 'http://[::1/v2/x', which is not a URL")


def _link_parse_seconds(fake: FakeRegistry, home: Path, size: int) -> float:
    page = Response(200, {"Link": "<" * size}, b'{"tags": ["v1.0.0"]}')
    fake.routes[:] = [Route("GET", TAGS, page)]
    with RegistryClient(settings_for(fake.url, home)) as client:
        started = time.perf_counter()
        assert client.list_tags(REGISTRY, REPO) == ["v1.0.0"]
        return time.perf_counter() - started


def test_a_link_header_costs_time_linear_in_its_length(tmp_path: Path) -> None:
    with FakeRegistry() as fake:
        small = min(_link_parse_seconds(fake, tmp_path, 15_000) for _ in range(3))
        large = min(_link_parse_seconds(fake, tmp_path, 60_000) for _ in range(3))
    assert large < 10 * small  # 4x the header; a pattern that rescanned it would cost 16x


# Tag lists: one budget for all the pages of a listing, in bytes and in tags.

def _numbered_pages(bodies: Sequence[bytes]) -> list[Route]:
    """Tag pages served from `bodies` (built before the test measures memory), each linking to the next."""
    def page(request: Request) -> Action:
        number = int(request.query.get("page", ["0"])[0])
        link = {"Link": f'</v2/{REPO}/tags/list?page={number + 1}>; rel="next"'} if number + 1 < len(bodies) else {}
        return Response(200, {"Content-Type": "text/plain", **link}, bodies[number])
    return [Route("GET", TAGS, page)]


def _page_of(tags: Iterable[str]) -> bytes:
    return json.dumps({"name": REPO, "tags": list(tags)}).encode()


HUGE_PAGE = b'{"name": "team/model", "tags": [' + b'"ab",' * (16 * 1024 * 1024 // 5) + b'"ab"]}'
TINY_VALUES = b'{"name": "team/model", "tags": ["v1.0.0"], "x": [' + b"[]," * (1024 * 1024 // 3) + b"[]]}"
MANY_TAGS = _page_of(f"build-{n:06d}" for n in range(30_000))


@pytest.mark.parametrize(("body", "pages", "message"), [
    pytest.param(HUGE_PAGE, 1000, "the tags listed are more than 8388608 bytes in all", id="huge-pages"),
    pytest.param(TINY_VALUES, 1000, "the tag list is longer than pinguard reads (100000 tags in all)",
                 id="tiny-values"),
    pytest.param(MANY_TAGS, 100, "the tag list is longer than pinguard reads (100000 tags in all)",
                 id="many-tags-100-pages"),
    pytest.param(MANY_TAGS, 1000, "the tag list is longer than pinguard reads (100000 tags in all)",
                 id="many-tags-1000-pages"),
])
def test_a_tag_list_without_end_is_cut_at_one_budget(tmp_path: Path, body: bytes, pages: int, message: str) -> None:
    with FakeRegistry(healthy(*_numbered_pages([body] * pages))) as fake:
        (status, _, lines, _), peak = peak_memory(lambda: resolve(fake.url, tmp_path, MOVING))
    assert_one_line(status, lines, f"{MOVING}: {REGISTRY}/{REPO}: {message}")
    assert peak < 24 * 1024 * 1024  # the 8 MiB of one listing, and the tags it holds
    assert len(fake.requests_to(TAGS)) <= 4  # the same few pages however many the registry would serve


def test_a_tag_list_within_the_budget_is_read_whole(tmp_path: Path) -> None:
    bodies = [_page_of(f"build-{page}-{n}" for n in range(20_000)) for page in range(4)]
    bodies[-1] = _page_of(["v1.0.0"])
    with FakeRegistry(healthy(*_numbered_pages(bodies))) as fake:
        status, out, lines, _ = resolve(fake.url, tmp_path, MOVING)
    assert (status, lines) == (0, [])
    assert "same digest as frozen tag v1.0.0" in out


def test_a_failed_tag_listing_is_not_repeated(tmp_path: Path) -> None:
    other = f"{REGISTRY}/{REPO}:v2"
    manifests = {tag: (IMAGE.media_type, IMAGE.data) for tag in ("v1", "v2")}
    routes = [*_numbered_pages([HUGE_PAGE]), *serve_manifests(REPO, manifests, blobs=BLOBS)]
    with FakeRegistry(routes) as fake:
        status, _, lines, _ = resolve(fake.url, tmp_path, MOVING, other)
    assert status == 2
    assert len(lines) == 2
    assert len(fake.requests_to(TAGS)) == 1


def test_the_tag_budget_holds_for_the_client_too(tmp_path: Path) -> None:
    with FakeRegistry(_numbered_pages([MANY_TAGS] * 10)) as fake, \
            RegistryClient(settings_for(fake.url, tmp_path)) as client, \
            pytest.raises(RegistryError, match=r"longer than pinguard reads \(100000 tags in all\)"):
        client.tags(REGISTRY, REPO)


# A mirror URL is printed and joined to paths: a query (which may carry a secret) or a fragment is refused.

@pytest.mark.parametrize("url", ["https://127.0.0.1:5000/path?x=s3cr3t", "https://127.0.0.1:5000/#s3cr3t",
                                 "https://127.0.0.1:5000/path?", "http://[::1", "http://127.0.0.1:99999/",
                                 "http://alice:s3cr3t@[::1"])
def test_a_mirror_url_that_is_refused_is_not_printed(tmp_path: Path, url: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    status = main(["resolve", "--mirror", f"{REGISTRY}={url}", FROZEN], env={"HOME": str(tmp_path)},
                  stdout=out, stderr=err)
    assert_one_line(status, err.getvalue().splitlines(), "invalid mirror")
    assert "s3cr3t" not in out.getvalue() + err.getvalue()


def test_a_mirror_url_with_a_query_is_refused_from_the_environment(tmp_path: Path) -> None:
    err = io.StringIO()
    status = main(["resolve", FROZEN], env={"HOME": str(tmp_path), "PINGUARD_MIRRORS": f"{REGISTRY}=https://h/?t=s3"},
                  stdout=io.StringIO(), stderr=err)
    assert_one_line(status, err.getvalue().splitlines(), f"invalid mirror for {REGISTRY}: its URL has a query")
    assert "t=s3" not in err.getvalue()

