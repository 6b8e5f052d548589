"""A reverse proxy that adds latency and counts requests: a registry one region away.

`LatencyProxy` listens on 127.0.0.1 over plain HTTP and forwards every request
to one upstream (http, or https verified against `ca_file`), and requests under
`/__token/` to an optional second upstream, the token server, so that token
fetches are delayed and counted too. It sleeps `delay` before forwarding and
again before answering, so each exchange costs one round trip of `2 * delay`
on top of the upstream's own time, whatever the connection reuse. Answers are
streamed back as they are (status, headers, undecoded body) and redirects are
not followed; the only change is that URLs naming an upstream in `Location`,
`Link` and `Www-Authenticate` are rewritten to name the proxy, so the client's
next request (a redirect, the next page, the token) comes back through it.
Requests are counted by (method, kind), the kind read from the path.
A subclass may answer a request itself (`intercept`, a `Canned` answer) or
forward it to another path (`route`): how `testing.lying_target` lies.
Connections upstream are kept alive and shared by every client connection, so
that the proxy's CPU (no TLS handshake a request), on a machine the client
shares, stays small beside the client's.

Given a `Quota`, the proxy enforces a request rate the way ECR Public does:
a token bucket per client address (all of loopback is one address here),
every request counted (HEAD, tags, tokens alike), and past it a 429 with
`{"errors":[{"code":"TOOMANYREQUESTS","message":"Rate exceeded"}]}` and no
Retry-After (or one, with `retry_after`). Every arrival is logged with its
time and whether it was refused, so tests can count requests per second.
"""

from __future__ import annotations

import http.client
import json
import re
import select
import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

TOKEN_PREFIX = "/__token"
# Per-connection headers (RFC 9110 section 7.6.1) are the proxy's own business, never forwarded.
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
)
_KINDS = (
    (re.compile(r"/v2/?"), "ping"),
    (re.compile(r"/v2/.+/manifests/[^/]+"), "manifest"),
    (re.compile(r"/v2/.+/blobs/[^/]+"), "blob"),
    (re.compile(r"/v2/.+/tags/list"), "tags"),
    (re.compile(re.escape(TOKEN_PREFIX) + r"/.*|/token"), "token"),
)


THROTTLED_BODY = json.dumps({"errors": [{"code": "TOOMANYREQUESTS", "message": "Rate exceeded"}]}).encode()


@dataclass
class Quota:
    """A token bucket: `rate` requests a second, at most `burst` saved up; full at the start.

    `lateness` forgives a request that arrives up to that many seconds early against the bucket: the
    proxy stamps an arrival when its thread wakes, and on a busy machine a thread woken late for one
    request makes the next one look early by as much, however evenly the client sent them.
    """

    rate: float
    burst: float = 1.0
    retry_after: int | None = None  # seconds to send in Retry-After; None sends none, as ECR does
    lateness: float = 0.0
    _tokens: float = field(init=False)
    _at: float = field(init=False, default_factory=time.monotonic)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._tokens = self.burst

    def admit(self, now: float) -> bool:
        with self._lock:
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            if self._tokens >= 1.0 - self.lateness * self.rate:
                self._tokens -= 1.0
                return True
            return False


@dataclass(frozen=True)
class Canned:
    """An answer the proxy gives without asking the upstream; to a HEAD, without Content-Length."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


@dataclass(frozen=True)
class Arrival:
    at: float  # time.monotonic() when the request arrived
    method: str
    path: str
    kind: str
    throttled: bool


def kind_of(path: str) -> str:
    """ "manifest", "blob", "tags", "token", "ping" or "other", from a request path."""
    bare = path.split("?", 1)[0]
    return next((kind for pattern, kind in _KINDS if pattern.fullmatch(bare)), "other")


class LatencyProxy:
    def __init__(
        self, upstream_url: str, delay: float = 0.02, ca_file: str | None = None, token_url: str | None = None,
        quota: Quota | None = None,
    ) -> None:
        self.upstream = upstream_url.rstrip("/")
        self.token_upstream = token_url.rstrip("/") if token_url else None
        self.delay = delay
        self.quota = quota
        self.counts: Counter[tuple[str, str]] = Counter()
        self.arrivals: list[Arrival] = []
        self._lock = threading.Lock()
        self._tls = ssl.create_default_context(cafile=ca_file)
        self._idle: dict[str, list[http.client.HTTPConnection]] = {}  # kept-alive connections upstream, by origin
        self._httpd = _Server(self)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def reset(self) -> None:
        with self._lock:
            self.counts.clear()
            self.arrivals.clear()

    @property
    def throttled(self) -> int:
        """Requests answered 429 since the last reset."""
        with self._lock:
            return sum(arrival.throttled for arrival in self.arrivals)

    def busiest_second(self) -> int:
        """The most requests that arrived within any one second (a sliding window)."""
        with self._lock:
            times = sorted(arrival.at for arrival in self.arrivals)
        busiest, start = 0, 0
        for end, at in enumerate(times):
            while times[start] <= at - 1.0:
                start += 1
            busiest = max(busiest, end - start + 1)
        return busiest

    def __enter__(self) -> LatencyProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._httpd.shutdown()
        self._thread.join()
        self._httpd.server_close()
        with self._lock:
            idle = [connection for connections in self._idle.values() for connection in connections]
            self._idle.clear()
        for connection in idle:
            connection.close()

    def target(self, path: str) -> str:
        """The upstream URL a proxied path stands for."""
        if self.token_upstream and path.startswith(TOKEN_PREFIX + "/"):
            return self.token_upstream + path.removeprefix(TOKEN_PREFIX)
        return self.upstream + path

    def rewrite(self, value: str) -> str:
        """A header value with upstream URLs made to point at the proxy."""
        if self.token_upstream:
            value = _replace_url(value, self.token_upstream, self.url + TOKEN_PREFIX)
        return _replace_url(value, self.upstream, self.url)

    def intercept(self, method: str, path: str, body: bytes) -> Canned | None:
        """The answer to give instead of forwarding the request; None forwards it (this proxy never intercepts)."""
        return None

    def route(self, method: str, path: str) -> str:
        """The path to forward the request to (this proxy: its own)."""
        return path

    def count(self, method: str, path: str) -> bool:
        """Count the request; False when the quota refuses it."""
        now = time.monotonic()
        admitted = self.quota is None or self.quota.admit(now)
        kind = kind_of(path)
        with self._lock:
            self.counts[(method, kind)] += 1
            self.arrivals.append(Arrival(now, method, path, kind, not admitted))
        return admitted

    def forward(self, method: str, path: str, headers: dict[str, str],
                body: bytes) -> tuple[http.client.HTTPResponse, http.client.HTTPConnection]:
        """The upstream's answer, its body not yet read, and the connection to `give_back` once it is."""
        time.sleep(self.delay)
        parts = urlsplit(self.target(path))
        connection = self._connection(parts.scheme, parts.netloc)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        try:
            connection.request(method, target, body=body or None, headers=headers)
            response = connection.getresponse()
        except BaseException:
            connection.close()
            raise
        time.sleep(self.delay)
        return response, connection

    def give_back(self, connection: http.client.HTTPConnection) -> None:
        """A connection whose last answer was read whole, for the next request to its origin."""
        with self._lock:
            self._idle.setdefault(_origin(connection), []).append(connection)

    def _connection(self, scheme: str, netloc: str) -> http.client.HTTPConnection:
        while True:
            with self._lock:
                idle = self._idle.get(f"{scheme}://{netloc}")
                connection = idle.pop() if idle else None
            if connection is None:
                if scheme == "https":
                    return http.client.HTTPSConnection(netloc, timeout=60, context=self._tls)
                return http.client.HTTPConnection(netloc, timeout=60)
            if not _dropped(connection):
                return connection
            connection.close()


def _origin(connection: http.client.HTTPConnection) -> str:
    scheme = "https" if isinstance(connection, http.client.HTTPSConnection) else "http"
    return f"{scheme}://{connection.host}:{connection.port}"


def _dropped(connection: http.client.HTTPConnection) -> bool:
    """Whether a kept-alive connection was closed by the upstream (it is readable while idle)."""
    return connection.sock is not None and bool(select.select([connection.sock], [], [], 0)[0])


def _replace_url(text: str, old: str, new: str) -> str:
    # Whole URLs only: upstream http://h:500 must leave http://h:5001 alone.
    return re.sub(re.escape(old) + r"(?![\w.:-])", lambda _: new, text)


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops connects from a concurrent client; SYN retries cost 1 s
    def __init__(self, proxy: LatencyProxy) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.proxy = proxy

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up mid-answer is its own business."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet; tests read `LatencyProxy.counts`."""


    def _handle(self) -> None:
        proxy = self.server.proxy
        admitted = proxy.count(self.command, self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if not admitted:
            self._throttle(proxy)
            return
        canned = proxy.intercept(self.command, self.path, body)
        if canned is not None:
            self._answer(canned.status, canned.headers, [canned.body], None if self.command == "HEAD" else
                         len(canned.body))
            return
        sent: dict[str, str] = {}
        for k, v in self.headers.items():  # clients (skopeo) repeat Accept: join, never drop
            if k.lower() not in _HOP_BY_HOP | {"host"}:
                sent[k] = f"{sent[k]}, {v}" if k in sent else v
        try:
            upstream, connection = proxy.forward(self.command, proxy.route(self.command, self.path), sent, body)
        except (OSError, http.client.HTTPException) as exc:
            failure = "SSLError" if isinstance(exc, ssl.SSLError) else type(exc).__name__
            message = f"proxy: upstream failed: {failure}\n".encode()
            self._answer(502, [("Content-Type", "text/plain")], [message], len(message))
            return
        headers = [
            (k, proxy.rewrite(v) if k.lower() in ("location", "link", "www-authenticate") else v)
            for k, v in upstream.getheaders()
            if k.lower() not in _HOP_BY_HOP
        ]
        size = upstream.getheader("Content-Length")
        chunks = iter(lambda: upstream.read1(65536), b"")
        try:
            self._answer(upstream.status, headers, chunks, int(size) if size else None)
            upstream.read()  # what the answer did not need (a HEAD's nothing): the connection is free again
        except BaseException:
            connection.close()  # left mid-answer
            raise
        proxy.give_back(connection)

    def _throttle(self, proxy: LatencyProxy) -> None:
        time.sleep(2 * proxy.delay)  # a refusal is still a round trip
        headers = [("Content-Type", "application/json")]
        if proxy.quota is not None and proxy.quota.retry_after is not None:
            headers.append(("Retry-After", str(proxy.quota.retry_after)))
        self._answer(429, headers, [THROTTLED_BODY], len(THROTTLED_BODY))

    def _answer(self, status: int, headers: list[tuple[str, str]], chunks: Any, size: int | None) -> None:
        """Send the answer; a body of unknown size goes chunked."""
        self.send_response(status)
        for name, value in headers:
            if name.lower() != "content-length":
                self.send_header(name, value)
        chunked = size is None and self.command != "HEAD" and status not in (204, 304)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif size is not None:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        if self.command == "HEAD":
            return
        for chunk in chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _handle
