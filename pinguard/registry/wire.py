"""HTTP/1.1 as registries speak it, on keep-alive connections pooled per host.

A request is written in one send and its answer read whole, framed by its
Content-Length, by chunks, or by the end of the connection. Nothing else a
general client does is done: no proxies, no cookies, no content codings
(`Accept-Encoding: identity` is sent), no redirects (the transport follows
them by hand, to keep credentials on their host). That is what makes a
request cost a fifth of the CPU it costs through requests and urllib3.

Every answer is hostile until read: headers at most `HEAD_LIMIT` bytes in
`MAX_FIELDS` fields, a chunk-size line at most `LINE_LIMIT`, the body at most
the caller's `limit`, and each step linear in the bytes received however
they trickle. Time is bounded by the caller's `Watch` (which aborts the
connection when its time is up) and, between two bytes, by the socket's
read timeout.
"""
from __future__ import annotations

import contextlib
import functools
import re
import select
import socket
import ssl
import threading
from collections.abc import Iterator, Mapping
from typing import Protocol, TypeVar, overload
from urllib.parse import quote, urlsplit

HEAD_LIMIT = 256 * 1024  # the status line and header fields of one answer
MAX_FIELDS = 100
LINE_LIMIT = 1024  # a chunk-size line, or one of a chunked body's trailer fields
_TRAILER_LIMIT = 64 * 1024
_MAX_INTERIM = 10  # 1xx answers (100 Continue, 103 Early Hints) before the final one
_RECEIVE = 64 * 1024  # bytes asked of the socket at a time (more would be a costlier allocation each time)
_JOIN_UNDER = 64 * 1024  # a body shorter than this goes out in the same send as the request's head
_STATUS = re.compile(r"HTTP/1\.([01]) ([0-9]{3})(?: (.*))?")
_DECIMAL = re.compile(r"[0-9]{1,18}")
_HEX = re.compile(rb"[0-9a-fA-F]{1,15}")
_FIELD = re.compile(r"^([^\s:][^:\r\n]*):[ \t]*([^\r\n]*)", re.MULTILINE)  # name, value (trailing blanks kept)
_FOLDED = re.compile(r"\r?\n[ \t]+")
# Characters a request target may carry as they are (requests' requote_uri): the rest is percent-encoded.
_TARGET_SAFE = "!#$%&'()*+,/:;=?@[]~"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.~!#$%&'()*+,/:;=?@\[\]-]")
_SPLIT = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)", re.DOTALL)  # scheme, authority, the rest
_NO_BODY = frozenset({204, 304})
_T = TypeVar("_T")
_Origin = tuple[str, str, int]  # (scheme, host, port)
_PoolKey = tuple[_Origin, bool | str]  # which idle connections may carry a request: one origin, trusted one way


class WireError(Exception):
    """A request that got no answer pinguard reads."""


class BadURL(WireError):
    """A URL no request can be sent to (no host, a port past 65535, a scheme other than http(s))."""


class BadRequest(WireError):
    """A header pinguard would send that could end the request early (a line break in a token)."""


class ConnectFailed(WireError):
    """No connection: refused, unreachable, no such host, or no answer within the connect timeout.
    Nothing was sent."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class TLSFailed(WireError):
    """The TLS handshake failed: `untrusted` when the certificate did not verify."""

    def __init__(self, message: str, *, untrusted: bool) -> None:
        super().__init__(message)
        self.untrusted = untrusted


class Dropped(WireError):
    """The connection ended, or went quiet for the read timeout, before the answer was whole."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class BadAnswer(WireError):
    """An answer that is not HTTP/1.1 as this client reads it."""


class InvalidHeader(BadAnswer):
    """A header that frames the body in two ways at once (two Content-Lengths that differ)."""


class TooLarge(WireError):
    """A body longer than the caller's limit."""


class Watch(Protocol):
    """The time limits of one exchange, kept by someone who can abort its connection."""

    def watch(self, connection: Connection) -> None:
        """From now on, `connection.abort()` when time is up."""

    def reading_body(self) -> None:
        """The headers are in and the body must still be read from the socket: its own limit starts."""


class Headers(Mapping[str, str]):
    """Header fields by name, whatever its case; a field sent more than once has its values joined by ", "."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, tuple[str, str]]) -> None:
        self._fields = fields  # lower-case name -> (name as sent, value)

    def __getitem__(self, name: str) -> str:
        return self._fields[name.lower()][1]

    @overload
    def get(self, name: str, /) -> str | None: ...

    @overload
    def get(self, name: str, /, default: str | _T) -> str | _T: ...

    def get(self, name: str, /, default: object = None) -> object:
        field = self._fields.get(name.lower())
        return default if field is None else field[1]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._fields

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._fields.values())

    def __len__(self) -> int:
        return len(self._fields)


class Response:
    """An answer read whole: `content` is its body (empty for HEAD); `url` and `method` are what was asked."""

    __slots__ = ("content", "headers", "method", "reason", "status_code", "url")

    def __init__(self, status_code: int, reason: str, headers: Headers, content: bytes, url: str,
                 method: str) -> None:
        self.status_code = status_code
        self.reason = reason
        self.headers = headers
        self.content = content
        self.url = url
        self.method = method


def _target(url: str) -> tuple[_Origin, str, str]:
    """Where a request for `url` goes: the origin connections are pooled by, the Host header, the target
    (path and query, percent-encoded where it must be)."""
    split = _SPLIT.fullmatch(url)
    if split is None:
        raise BadURL(f"{url[:200]!r} is not an http(s) URL")
    origin, host_header = _origin(split.group(1).lower(), split.group(2))
    path = split.group(3).partition("#")[0]
    path = path if path.startswith("/") else "/" + path
    return origin, host_header, quote(path, safe=_TARGET_SAFE) if _UNSAFE.search(path) else path


@functools.lru_cache(maxsize=256)
def _origin(scheme: str, netloc: str) -> tuple[_Origin, str]:
    """Where `scheme://netloc` connects, and its Host header; every request to one origin reads it once."""
    try:
        parts = urlsplit(f"{scheme}://{netloc}")
        port = parts.port
    except ValueError:
        raise BadURL(f"{scheme}://{netloc[:200]} is not a URL") from None
    host = parts.hostname
    if scheme not in ("http", "https") or not host:
        raise BadURL(f"{scheme}://{netloc[:200]} is not an http(s) URL with a host")
    return (scheme, host, port or (443 if scheme == "https" else 80)), parts.netloc.rpartition("@")[2]


class Connection:
    """One socket, its bytes received and not yet read, and a way for another thread to end it."""

    def __init__(self, key: _PoolKey, sock: socket.socket) -> None:
        self.key = key
        self._sock: socket.socket | None = sock
        self._guard = threading.Lock()  # abort() and close() from other threads against a socket being replaced
        self._buffer = bytearray()
        self._body_watch: Watch | None = None
        self.reusable = True  # until an answer says otherwise

    def abort(self) -> None:
        """Shut the socket down, which ends whatever read or handshake waits on it (from any thread)."""
        with self._guard:
            if self._sock is not None:
                with contextlib.suppress(OSError):  # already closed by the other end
                    socket.socket.shutdown(self._sock, socket.SHUT_RDWR)  # the socket's, not TLS's, shutdown

    def close(self) -> None:
        with self._guard:
            sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def start_tls(self, context: ssl.SSLContext, host: str) -> None:
        with self._guard:
            assert self._sock is not None
            self._sock = context.wrap_socket(self._sock, server_hostname=host, do_handshake_on_connect=False)
            tls = self._sock
        try:
            tls.do_handshake()
        except ssl.SSLCertVerificationError as exc:
            raise TLSFailed(f"certificate not trusted: {exc.verify_message}", untrusted=True) from None
        except ssl.SSLError as exc:
            raise TLSFailed(f"TLS handshake failed: {exc.reason or exc}", untrusted=False) from None
        except TimeoutError:
            raise Dropped("no TLS handshake", timed_out=True) from None
        except OSError as exc:
            raise Dropped(f"connection dropped during the TLS handshake ({exc.strerror or exc})") from None

    def is_stale(self) -> bool:
        """Whether an idle connection has been closed by the other end (or sent what nobody asked for)."""
        sock = self._sock
        if sock is None or self._buffer or (isinstance(sock, ssl.SSLSocket) and sock.pending()):
            return True
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))

    def send(self, data: bytes, body: bytes | None) -> None:
        sock = self._sock
        if sock is None:
            raise Dropped("connection closed")
        try:
            if body is None or len(body) < _JOIN_UNDER:
                sock.sendall(data + body if body else data)
            else:
                sock.sendall(data)
                sock.sendall(body)
        except TimeoutError:
            raise Dropped("the request could not be sent", timed_out=True) from None
        except OSError as exc:
            raise Dropped(f"connection dropped while sending ({exc.strerror or exc})") from None

    def receive(self, method: str, limit: int, watch: Watch | None) -> tuple[int, str, Headers, bytes]:
        """The final answer to a request just sent: status, reason, headers, body (at most `limit` bytes)."""
        self._body_watch = None
        for _ in range(_MAX_INTERIM + 1):
            version, status, reason, headers = self._head()
            if status >= 200:
                break
            if status == 101:
                raise BadAnswer("101 Switching Protocols, which nothing asked for")
        else:
            raise BadAnswer(f"more than {_MAX_INTERIM} interim (1xx) answers")
        self.reusable = version == 1 and "close" not in (headers.get("Connection") or "").lower()
        body = b""
        if method != "HEAD" and status not in _NO_BODY:
            self._body_watch = watch  # told when the body needs bytes not received with the headers
            body = self._body(headers, limit)
        self.reusable = self.reusable and not self._buffer  # bytes past the answer: nothing to read them as
        return status, reason, headers, body

    def _head(self) -> tuple[int, int, str, Headers]:
        """The next status line and header fields, parsed."""
        buffer = self._buffer
        searched = 0
        while True:
            end = _end_of_head(buffer, searched)
            if end >= 0:
                break
            if len(buffer) > HEAD_LIMIT:
                raise BadAnswer(f"status line and headers longer than {HEAD_LIMIT} bytes")
            searched = max(0, len(buffer) - 2)
            self._fill("before the answer came" if not buffer else "in the middle of the headers")
        if end > HEAD_LIMIT:
            raise BadAnswer(f"status line and headers longer than {HEAD_LIMIT} bytes")
        first, _, fields = buffer[:end].decode("latin-1").partition("\n")
        del buffer[:end]
        status = _STATUS.fullmatch(first.rstrip("\r"))
        if status is None:
            raise BadAnswer(f"not an HTTP/1.x status line: {first[:80]!r}")
        return int(status.group(1)), int(status.group(2)), status.group(3) or "", _fields(fields)

    def _body(self, headers: Headers, limit: int) -> bytes:
        encoding = headers.get("Transfer-Encoding")
        if encoding is not None:
            if encoding.strip().lower() != "chunked":
                raise BadAnswer(f"transfer coding {encoding[:80]!r}, where only chunked is read")
            return self._chunked(limit)
        length = _content_length(headers.get("Content-Length"))
        if length is None:
            self.reusable = False  # the body ends with the connection
            return self._until_closed(limit)
        if length > limit:
            raise TooLarge(f"{length} bytes announced")
        return self._exactly(length)

    def _exactly(self, size: int) -> bytes:
        buffer = self._buffer
        if len(buffer) >= size:
            data = bytes(buffer[:size])
            del buffer[:size]
            return data
        out = bytearray(size)
        have = len(buffer)
        out[:have] = buffer
        buffer.clear()
        view = memoryview(out)
        while have < size:
            got = self._receive_into(view[have:])
            if not got:
                raise Dropped(f"connection closed after {have} of {size} bytes")
            have += got
        return bytes(out)

    def _chunked(self, limit: int) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            size_line = self._line()
            size_text = size_line.split(b";", 1)[0].strip()
            if not _HEX.fullmatch(size_text):
                raise BadAnswer(f"a chunk size that is no number: {size_line[:40]!r}")
            size = int(size_text, 16)
            if size == 0:
                break
            total += size
            if total > limit:
                raise TooLarge(f"more than {limit} bytes in chunks")
            parts.append(self._exactly(size))
            if self._line().strip():
                raise BadAnswer("a chunk longer than its size")
        trailers = 0
        while self._line().strip():  # trailer fields: read and dropped
            trailers += 1
            if trailers * LINE_LIMIT > _TRAILER_LIMIT:
                raise BadAnswer("trailer fields without end")
        return b"".join(parts)

    def _until_closed(self, limit: int) -> bytes:
        buffer = self._buffer
        while len(buffer) <= limit:
            chunk = self._receive()
            if not chunk:
                data = bytes(buffer)
                buffer.clear()
                return data
            buffer += chunk
        raise TooLarge(f"more than {limit} bytes before the connection closed")

    def _line(self) -> bytes:
        """The next line of a chunked body's framing, without its line break."""
        buffer = self._buffer
        searched = 0
        while True:
            end = buffer.find(b"\n", searched)
            if end >= 0:
                break
            if len(buffer) > LINE_LIMIT:
                raise BadAnswer(f"a line of a chunked body's framing longer than {LINE_LIMIT} bytes")
            searched = len(buffer)
            self._fill("in the middle of a chunked body")
        if end > LINE_LIMIT:
            raise BadAnswer(f"a line of a chunked body's framing longer than {LINE_LIMIT} bytes")
        line = bytes(buffer[:end]).rstrip(b"\r")
        del buffer[:end + 1]
        return line

    def _fill(self, where: str) -> None:
        chunk = self._receive()
        if not chunk:
            raise Dropped(f"connection closed {where}")
        self._buffer += chunk

    def _socket(self) -> socket.socket:
        """The socket to read from; the body's own time limit starts with its first read."""
        if self._body_watch is not None:
            self._body_watch.reading_body()
            self._body_watch = None
        sock = self._sock
        if sock is None:
            raise Dropped("connection closed")
        return sock

    def _receive(self) -> bytes:
        """What has arrived (at least a byte), b"" at the end of the connection."""
        try:
            return self._socket().recv(_RECEIVE)
        except TimeoutError:
            raise Dropped("no bytes within the read timeout", timed_out=True) from None
        except OSError as exc:  # reset, or a TLS record cut short
            raise Dropped(f"connection dropped ({exc.strerror or exc})") from None

    def _receive_into(self, view: memoryview) -> int:
        try:
            return self._socket().recv_into(view, min(len(view), _RECEIVE))
        except TimeoutError:
            raise Dropped("no bytes within the read timeout", timed_out=True) from None
        except OSError as exc:
            raise Dropped(f"connection dropped ({exc.strerror or exc})") from None


class Pool:
    """Keep-alive connections to any number of hosts, at most `max_idle` kept idle for each."""

    def __init__(self, max_idle: int) -> None:
        self._max_idle = max_idle
        self._idle: dict[_PoolKey, list[Connection]] = {}
        self._contexts: dict[bool | str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None = None, *,
                limit: int, connect_timeout: float, read_timeout: float, verify: bool | str = True,
                watch: Watch | None = None) -> Response:
        """`method url` with `headers` (and `body`), its answer read whole: at most `limit` bytes of body."""
        origin, host_header, path = _target(url)
        head = _request_head(method, path, host_header, headers, body)
        connection = self._idle_connection((origin, verify))
        if connection is not None:
            if watch is not None:
                watch.watch(connection)
        else:
            connection = self._connect(origin, connect_timeout, read_timeout, verify, watch)
        try:
            connection.send(head, body)
            status, reason, fields, content = connection.receive(method, limit, watch)
        except BaseException:
            connection.close()
            raise
        self._put_back(connection)
        return Response(status, reason, fields, content, url, method)

    def has_idle(self, url: str, verify: bool | str = True) -> bool:
        """Whether a connection that could carry a request to `url` is open and idle."""
        with self._lock:
            return bool(self._idle.get((_target(url)[0], verify)))

    def open(self, url: str, *, connect_timeout: float, read_timeout: float, verify: bool | str = True,
             watch: Watch | None = None) -> None:
        """A connection to `url`'s host opened (and its TLS handshake done) for the next request to take."""
        self._put_back(self._connect(_target(url)[0], connect_timeout, read_timeout, verify, watch))

    def close(self) -> None:
        with self._lock:
            idle = [connection for connections in self._idle.values() for connection in connections]
            self._idle.clear()
        for connection in idle:
            connection.close()

    def _idle_connection(self, key: _PoolKey) -> Connection | None:
        while True:
            with self._lock:
                idle = self._idle.get(key)
                if not idle:
                    return None
                connection = idle.pop()
            if not connection.is_stale():
                return connection
            connection.close()

    def _put_back(self, connection: Connection) -> None:
        if connection.reusable:
            with self._lock:
                idle = self._idle.setdefault(connection.key, [])
                if len(idle) < self._max_idle:
                    idle.append(connection)
                    return
        connection.close()

    def _connect(self, origin: _Origin, connect_timeout: float, read_timeout: float, verify: bool | str,
                 watch: Watch | None) -> Connection:
        scheme, host, port = origin
        try:
            sock = socket.create_connection((host, port), timeout=connect_timeout)
        except TimeoutError:
            raise ConnectFailed("no connection within the connect timeout", timed_out=True) from None
        except OSError as exc:  # refused, unreachable, no such host
            raise ConnectFailed(f"no connection ({exc.strerror or exc})") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a request is one send: never held back
        sock.settimeout(read_timeout)
        connection = Connection((origin, verify), sock)
        if watch is not None:
            watch.watch(connection)  # before the handshake: one that trickles is cut like any answer
        if scheme == "https":
            try:
                connection.start_tls(self._context(verify), host)
            except BaseException:
                connection.close()
                raise
        return connection

    def _context(self, verify: bool | str) -> ssl.SSLContext:
        """One TLS context per trust setting: loading the CA bundle is the costly part of a first handshake."""
        with self._lock:
            context = self._contexts.get(verify)
            if context is None:
                context = self._contexts[verify] = _tls_context(verify)
            return context


def _tls_context(verify: bool | str) -> ssl.SSLContext:
    """`verify` True: the system's CAs; a path: the CAs in that file; False: no verification (--insecure-registry)."""
    if verify is False:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context = ssl.create_default_context(cafile=verify if isinstance(verify, str) else None)
    context.set_alpn_protocols(["http/1.1"])
    return context


def _request_head(method: str, path: str, host_header: str, headers: Mapping[str, str], body: bytes | None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host_header}", "Accept-Encoding: identity"]
    for name, value in headers.items():
        if _breaks_a_line(name) or _breaks_a_line(value):
            raise BadRequest(f"the header {name[:40]!r} holds a line break or a NUL")
        lines.append(f"{name}: {value}")
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body or b'')}")
    text = "\r\n".join(lines) + "\r\n\r\n"
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        raise BadRequest("a header value that is not Latin-1 text") from None


def _breaks_a_line(text: str) -> bool:
    """Whether `text`, in a header, could end the request early and smuggle in another."""
    return "\n" in text or "\r" in text or "\x00" in text  # a regex scans a kilobyte token 50 times slower


def _end_of_head(buffer: bytearray, start: int) -> int:
    """Where the blank line that ends the header fields ends, searching from `start`; -1 if not yet received."""
    crlf = buffer.find(b"\n\r\n", start)
    lf = buffer.find(b"\n\n", start, crlf if crlf >= 0 else len(buffer))
    if lf >= 0:
        return lf + 2
    return crlf + 3 if crlf >= 0 else -1


def _fields(text: str) -> Headers:
    """The header fields of `text` (the lines after the status line); a line that is no field is skipped."""
    if _FOLDED.search(text):
        text = _FOLDED.sub(" ", text)  # an obsolete folded line continues the field before it
    found = _FIELD.findall(text)
    if len(found) > MAX_FIELDS:
        raise BadAnswer(f"more than {MAX_FIELDS} header fields")
    fields: dict[str, tuple[str, str]] = {}
    for name, value in found:
        name = name.rstrip()
        value = value.rstrip(" \t\r")
        lower = name.lower()
        known = fields.get(lower)
        fields[lower] = (name, value) if known is None else (known[0], f"{known[1]}, {value}")
    return Headers(fields)


def _content_length(value: str | None) -> int | None:
    """The body's length; None when the header is absent or no length to trust (the body then ends with the
    connection). Copies of one length are that length; lengths that differ frame the body two ways."""
    if value is None:
        return None
    lengths = {part.strip() for part in value.split(",")}
    if len(lengths) > 1:
        raise InvalidHeader(f"Content-Length {value[:80]!r} gives lengths that differ")
    length = lengths.pop()
    return int(length) if _DECIMAL.fullmatch(length) else None
