"""HTTP/1.1 on the wire: every framing a registry may use, the bounds a hostile one meets, and keep-alive."""
from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from pinguard.registry.wire import (
    HEAD_LIMIT,
    MAX_FIELDS,
    BadAnswer,
    BadRequest,
    Dropped,
    InvalidHeader,
    Pool,
    TooLarge,
)


@dataclass
class Script:
    """Answers, one per request, each the exact bytes to send; `close_after` hangs up once it is sent."""

    answers: list[bytes]
    close_after: set[int] = field(default_factory=set)
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    hung_up: threading.Event = field(default_factory=threading.Event)  # set once it closes after an answer


class ScriptedServer:
    """A loopback server that reads each request (head and Content-Length body) and sends the next answer."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.script.connections += 1
            threading.Thread(target=self._talk, args=(connection,), daemon=True).start()

    def _talk(self, connection: socket.socket) -> None:
        with connection:
            pending = b""
            while True:
                while b"\r\n\r\n" not in pending:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    pending += chunk
                head, _, pending = pending.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(pending) < length:
                    pending += connection.recv(65536)
                with self._lock:
                    number = len(self.script.requests)
                    self.script.requests.append(head + b"\r\n\r\n" + pending[:length])
                pending = pending[length:]
                connection.sendall(self.script.answers[number])
                if number in self.script.close_after:
                    connection.close()
                    self.script.hung_up.set()
                    return


@pytest.fixture
def pool() -> Iterator[Pool]:
    opened = Pool(max_idle=4)
    yield opened
    opened.close()


def serve(*answers: bytes, close_after: set[int] | None = None) -> tuple[ScriptedServer, Script]:
    script = Script(list(answers), close_after or set())
    return ScriptedServer(script), script


def get(pool: Pool, url: str, method: str = "GET", limit: int = 1 << 20, body: bytes | None = None,
        headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
    answer = pool.request(method, url, headers or {}, body, limit=limit, connect_timeout=2, read_timeout=2)
    return answer.status_code, answer.content, dict(answer.headers.items())


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nhello"


def test_a_body_of_known_length_keeps_the_connection(pool: Pool) -> None:
    server, script = serve(OK, OK)
    assert get(pool, server.url + "/a") == (200, b"hello", {"Content-Length": "5", "X-A": "1, 2"})
    assert get(pool, server.url + "/b")[1] == b"hello"
    assert script.connections == 1
    assert script.requests[0].startswith(b"GET /a HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"Accept-Encoding: identity\r\n" in script.requests[0]
    server.close()


def test_a_chunked_body_with_extensions_and_trailers(pool: Pool) -> None:
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5;name=value\r\nhello\r\n1\r\n!\r\n0\r\nTrailer: x\r\n\r\n")
    server, script = serve(chunked, OK)
    assert get(pool, server.url)[1] == b"hello!"
    assert get(pool, server.url)[1] == b"hello"
    assert script.connections == 1
    server.close()


def test_interim_answers_before_the_final_one(pool: Pool) -> None:
    server, _ = serve(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" + OK)
    assert get(pool, server.url)[:2] == (200, b"hello")
    server.close()


def test_a_body_without_a_length_ends_with_the_connection(pool: Pool) -> None:
    server, script = serve(b"HTTP/1.0 200 OK\r\n\r\nall of it", OK, close_after={0})
    assert get(pool, server.url)[1] == b"all of it"
    assert get(pool, server.url)[1] == b"hello"
    assert script.connections == 2
    server.close()


@pytest.mark.parametrize("length", [b"-1", b"\xc2\xb2", b"9" * 30, b"0x10"])
def test_a_length_that_is_no_number_is_no_length(pool: Pool, length: bytes) -> None:
    server, _ = serve(b"HTTP/1.1 200 OK\r\nContent-Length: " + length + b"\r\nConnection: close\r\n\r\nbody",
                      close_after={0})
    assert get(pool, server.url)[1] == b"body"
    server.close()


def test_connection_close_is_honoured(pool: Pool) -> None:
    closing = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
    server, script = serve(closing, OK, close_after={0})
    get(pool, server.url)
    assert get(pool, server.url)[1] == b"hello"
    assert script.connections == 2
    server.close()


def test_a_head_answer_has_no_body_and_keeps_the_connection(pool: Pool) -> None:
    server, script = serve(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", OK)
    assert get(pool, server.url, "HEAD") == (200, b"", {"Content-Length": "1000"})
    assert get(pool, server.url)[1] == b"hello"
    assert script.connections == 1
    server.close()


def test_an_idle_connection_closed_by_the_server_is_not_reused(pool: Pool) -> None:
    server, script = serve(OK, OK, close_after={0})  # hangs up without saying so
    get(pool, server.url)
    assert script.hung_up.wait(30)
    assert get(pool, server.url)[1] == b"hello"
    assert script.connections == 2
    server.close()


def test_copies_of_one_length_are_that_length_and_two_lengths_are_refused(pool: Pool) -> None:
    server, _ = serve(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello",
                      b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab")
    assert get(pool, server.url)[1] == b"hello"
    with pytest.raises(InvalidHeader, match="lengths that differ"):
        get(pool, server.url)
    server.close()


@pytest.mark.parametrize("answer", [
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world", id="announced"),
    pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n",
                 id="chunked"),
    pytest.param(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhello world", id="until-closed"),
])
def test_a_body_past_the_limit(pool: Pool, answer: bytes) -> None:
    server, _ = serve(answer, close_after={0})
    with pytest.raises(TooLarge):
        get(pool, server.url, limit=10)
    server.close()


@pytest.mark.parametrize("answer", [
    pytest.param(b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * HEAD_LIMIT + b"\r\n\r\n", id="long-headers"),
    pytest.param(b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_FIELDS + 1) + b"\r\n", id="many-fields"),
    pytest.param(b"SSH-2.0-OpenSSH_9.2\r\n\r\n", id="no-status-line"),
    pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", id="transfer-coding"),
    pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", id="chunk-size"),
    pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"0" * 2000, id="chunk-line"),
    pytest.param(b"HTTP/1.1 101 Switching Protocols\r\n\r\n", id="switching"),
])
def test_answers_no_registry_sends(pool: Pool, answer: bytes) -> None:
    server, _ = serve(answer, close_after={0})
    with pytest.raises(BadAnswer):
        get(pool, server.url)
    server.close()


def test_an_answer_cut_short_is_dropped(pool: Pool) -> None:
    server, _ = serve(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello", close_after={0})
    with pytest.raises(Dropped, match="after 5 of 100 bytes"):
        get(pool, server.url)
    server.close()


def test_a_header_that_would_end_the_request_is_never_sent(pool: Pool) -> None:
    server, script = serve(OK)
    with pytest.raises(BadRequest):
        get(pool, server.url, headers={"Authorization": "Bearer t\r\nX-Injected: 1"})
    assert script.requests == [] and script.connections == 0
    server.close()


def test_the_target_is_percent_encoded_and_the_body_counted(pool: Pool) -> None:
    server, script = serve(b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
    status, _, _ = get(pool, server.url + "/v2/a b/é?x=1 2", "PUT", body=b"payload")
    assert status == 201
    assert script.requests[0].startswith(b"PUT /v2/a%20b/%C3%A9?x=1%202 HTTP/1.1\r\n")
    assert script.requests[0].endswith(b"Content-Length: 7\r\n\r\npayload")
    server.close()
