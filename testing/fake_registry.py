"""A FAKE registry: an HTTP server whose every answer is programmed by the test.

It knows nothing of the distribution API by itself: a test gives it routes,
(method, path regex) -> what to do, and reads back the requests it received.
`serve_manifests` builds the routes of a well-behaved registry for one
repository, so fault routes placed before them need only describe the fault;
`serve_referrers` adds the OCI 1.1 referrers API over the same manifests.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from requests.structures import CaseInsensitiveDict

OCI_INDEX = "application/vnd.oci.image.index.v1+json"  # what the referrers API answers with


@dataclass(frozen=True)
class Request:
    """One request as the fake received it."""

    method: str
    path: str  # with the query string
    headers: CaseInsensitiveDict[str]
    body: bytes = b""

    @property
    def bare_path(self) -> str:
        return urlsplit(self.path).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.path).query)


@dataclass(frozen=True)
class Response:
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""  # never sent for HEAD; Content-Length still describes it, unless headers give Transfer-Encoding


@dataclass(frozen=True)
class Drop:
    """Close the connection without answering."""


@dataclass(frozen=True)
class Delay:
    seconds: float
    then: Response


@dataclass(frozen=True)
class Redirect:
    location: str
    status: int = 307


@dataclass(frozen=True)
class Drip:
    """Send the headers of `then`, then its body a byte every `interval` seconds; with `head`, the
    status line and headers a byte at a time too (a long header value makes that last for ever)."""

    then: Response
    interval: float
    head: bool = False


Action = Response | Drop | Delay | Redirect | Drip
Handler = Callable[[Request], Action | None]  # None lets the routes after it answer
Answer = Action | Sequence[Action] | Handler


class Route:
    """(method, path regex) -> one action for every request, a sequence, or a handler.

    `method` "*" matches any method; `pattern` must match the whole path without
    its query. A sequence answers one request per item and then steps aside, so
    `[Response(503), Response(503)]` before `serve_manifests` means "fail twice, then work".
    """

    def __init__(self, method: str, pattern: str, answer: Answer) -> None:
        self.method = method
        self.pattern = re.compile(pattern)
        self._queue = list(answer) if isinstance(answer, Sequence) else None
        self._handler = answer if callable(answer) else None
        self._fixed = answer if isinstance(answer, Action) else None
        self._lock = threading.Lock()

    def answer(self, request: Request) -> Action | None:
        wanted = self.method in ("*", request.method) and self.pattern.fullmatch(request.bare_path)
        if not wanted:
            return None
        if self._queue is not None:
            with self._lock:
                return self._queue.pop(0) if self._queue else None
        return self._handler(request) if self._handler is not None else self._fixed


class FakeRegistry:
    """Threaded plain-HTTP server on 127.0.0.1 and a free port."""

    def __init__(self, routes: Sequence[Route] = ()) -> None:
        self.routes: list[Route] = list(routes)
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self.closed = threading.Event()  # cuts Delay short so shutdown never waits on a sleeper
        self._httpd = _Server(self)
        self.host = f"127.0.0.1:{self._httpd.server_address[1]}"
        self.url = f"http://{self.host}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def add(self, *routes: Route) -> FakeRegistry:
        self.routes.extend(routes)
        return self

    def requests_to(self, pattern: str) -> list[Request]:
        """The requests whose path (without query) matches `pattern`."""
        return [r for r in self.requests if re.fullmatch(pattern, r.bare_path)]

    def __enter__(self) -> FakeRegistry:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.closed.set()
        self._httpd.shutdown()
        self._thread.join()
        self._httpd.server_close()

    def dispatch(self, request: Request) -> Action:
        with self._lock:
            self.requests.append(request)
        for route in list(self.routes):
            action = route.answer(request)
            if action is not None:
                return action
        return error_response(404, "NOT_FOUND", f"no route in the fake for {request.path}")


class _Server(ThreadingHTTPServer):  # its handler threads are daemons: a Delay never blocks exit
    request_queue_size = 128  # the default 5 drops connects from a concurrent client; SYN retries cost 1 s
    def __init__(self, fake: FakeRegistry) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up (timeouts, drops) are part of the tests, not errors."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, as registries and pinguard's sessions use it

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet; tests read `FakeRegistry.requests`."""

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        headers = CaseInsensitiveDict(dict(self.headers.items()))
        request = Request(self.command, self.path, headers, self.rfile.read(length))
        action = self.server.fake.dispatch(request)
        if isinstance(action, Delay):
            action = Drop() if self.server.fake.closed.wait(action.seconds) else action.then
        if isinstance(action, Drop):
            self.close_connection = True
            return
        if isinstance(action, Redirect):
            action = Response(action.status, {"Location": action.location})
        if isinstance(action, Drip):
            self._drip(action)
            return
        self.send_response(action.status)
        for name, value in action.headers.items():
            self.send_header(name, value)
        given = CaseInsensitiveDict(action.headers)
        if "Content-Length" not in given and "Transfer-Encoding" not in given:
            self.send_header("Content-Length", str(len(action.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(action.body)

    def _drip(self, drip: Drip) -> None:
        head = [f"HTTP/1.1 {drip.then.status} {self.responses.get(drip.then.status, ('',))[0]}"]
        head += [f"{name}: {value}" for name, value in drip.then.headers.items()]
        head.append(f"Content-Length: {len(drip.then.body)}")
        wire = "".join(line + "\r\n" for line in [*head, ""]).encode("latin-1")
        if not drip.head:
            self.wfile.write(wire)
        for byte in (wire if drip.head else b"") + drip.then.body:
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            if self.server.fake.closed.wait(drip.interval):
                break
        self.close_connection = True

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def manifest_response(media_type: str, data: bytes) -> Response:
    """What a registry answers for a manifest (HEAD gets the same headers, no body)."""
    headers = {"Docker-Content-Digest": digest(data), "Content-Type": media_type}
    return Response(200, {**headers, "Content-Length": str(len(data))}, data)


def error_response(status: int, code: str, message: str = "") -> Response:
    """A distribution-API error body, e.g. error_response(404, "NAME_UNKNOWN")."""
    body = json.dumps({"errors": [{"code": code, "message": message or code.lower()}]})
    return Response(status, {"Content-Type": "application/json"}, body.encode())


def serve_manifests(
    repository: str,
    manifests: Mapping[str, tuple[str, bytes]],
    *,
    tags: Sequence[str] | None = None,
    page_size: int | None = None,
    link_base: str = "",
    blobs: Mapping[str, bytes] | None = None,
) -> list[Route]:
    """Routes for one repository: `manifests` (digest or tag -> (media type, bytes)), blobs, tags.

    `tags/list` pages through `tags` (default: the keys that are not digests), `page_size`
    (or the client's `n`) at a time, as text/plain with a `Link` to the next page, as ECR
    Public does; `link_base` (a URL) before the link's path makes it absolute.
    """
    listed = list(tags if tags is not None else [k for k in manifests if ":" not in k])
    stored = {digest(data): (kind, data) for kind, data in manifests.values()} | dict(manifests)
    base = re.escape(f"/v2/{repository}")

    def manifest(request: Request) -> Action:
        reference = request.bare_path.rsplit("/", 1)[1]
        if reference not in stored:
            return error_response(404, "MANIFEST_UNKNOWN", f"manifest unknown: {reference}")
        return manifest_response(*stored[reference])

    def blob(request: Request) -> Action:
        wanted = request.bare_path.rsplit("/", 1)[1]
        if wanted not in (blobs or {}):
            return error_response(404, "BLOB_UNKNOWN")
        headers = {"Docker-Content-Digest": wanted, "Content-Type": "application/octet-stream"}
        return Response(200, headers, (blobs or {})[wanted])

    def tag_list(request: Request) -> Action:
        last = request.query.get("last", [""])[0]
        size = int(request.query.get("n", [page_size or len(listed) or 1])[0])
        start = listed.index(last) + 1 if last in listed else 0
        page = listed[start : start + size]
        headers = {"Content-Type": "text/plain; charset=utf-8"}
        if start + size < len(listed):
            next_page = f"{link_base}/v2/{repository}/tags/list?last={page[-1]}&n={size}"
            headers["Link"] = f'<{next_page}>; rel="next"'
        return Response(200, headers, json.dumps({"name": repository, "tags": page}).encode())

    return [
        Route("*", base + r"/manifests/[^/]+", manifest),
        Route("*", base + r"/blobs/[^/]+", blob),
        Route("GET", base + r"/tags/list", tag_list),
    ]


def referrer_descriptor(media_type: str, data: bytes) -> dict[str, Any]:
    """How a registry lists a manifest among its subject's referrers: its artifactType (else its
    config's media type, as OCI 1.1 says) and its annotations."""
    document = json.loads(data)
    config = document.get("config") or {}
    descriptor: dict[str, Any] = {"mediaType": media_type, "digest": digest(data), "size": len(data)}
    artifact_type = document.get("artifactType") or config.get("mediaType")
    if artifact_type:
        descriptor["artifactType"] = artifact_type
    if document.get("annotations"):
        descriptor["annotations"] = document["annotations"]
    return descriptor


def serve_referrers(
    repository: str,
    manifests: Mapping[str, tuple[str, bytes]],
    *,
    page_size: int | None = None,
    filters: bool = True,
    link_base: str = "",
) -> list[Route]:
    """The referrers API for one repository: every manifest in `manifests` (as given to
    `serve_manifests`) that has a `subject` is listed under that subject's digest.

    `?artifactType=` is applied and said so (`OCI-Filters-Applied`) when `filters`, else
    ignored, as some registries do. `page_size` entries a page, with a `Link` to the next.
    """
    listed: dict[str, list[dict[str, Any]]] = {}
    for media_type, data in dict.fromkeys(manifests.values()):
        subject = json.loads(data).get("subject")
        if isinstance(subject, dict):
            listed.setdefault(subject["digest"], []).append(referrer_descriptor(media_type, data))

    def referrers(request: Request) -> Action:
        subject = request.bare_path.rsplit("/", 1)[1]
        entries = listed.get(subject, [])
        wanted = request.query.get("artifactType", [""])[0]
        headers = {"Content-Type": OCI_INDEX}
        if filters and wanted:
            entries = [entry for entry in entries if entry.get("artifactType") == wanted]
            headers["OCI-Filters-Applied"] = "artifactType"
        size = page_size or len(entries) or 1
        start = int(request.query.get("page", ["0"])[0]) * size
        if start + size < len(entries):
            query = urlencode({"page": start // size + 1, **({"artifactType": wanted} if wanted else {})})
            headers["Link"] = f'<{link_base}/v2/{repository}/referrers/{subject}?{query}>; rel="next"'
        page = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries[start : start + size]}
        return Response(200, headers, json.dumps(page).encode())

    return [Route("GET", re.escape(f"/v2/{repository}") + r"/referrers/[^/]+", referrers)]
