"""Time limits that hold inside a request, where socket timeouts do not.

A socket's read timeout restarts with every byte, so a server that sends its TLS
handshake, its headers or its body a byte at a time would hold a request as long
as it likes. Each exchange runs under a `Cutoff`: when its time is up, one
watchdog thread shuts its socket down, which ends whatever read waits on it.
Connections made through `GuardedAdapter` hand their sockets to the cutoff of
the thread using them.
"""
from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

_current = threading.local()  # the cutoff of the exchange this thread is in, if any


class Cutoff:
    """While entered, the sockets this thread's requests use are shut down at `until` (time.monotonic)."""

    def __init__(self, until: float) -> None:
        self.until = until
        self.fired = False
        self._watched: socket.socket | None = None  # a duplicate: ours to close, whoever closes the original

    def __enter__(self) -> Cutoff:
        _current.cutoff = self
        _WATCHDOG.arm(self)
        return self

    def __exit__(self, *_: object) -> None:
        _current.cutoff = None
        with _WATCHDOG.lock:
            _WATCHDOG.disarm(self)
            self._forget()

    def move(self, until: float) -> None:
        """A new limit, from now on (the body of an answer whose headers came in time); once fired,
        `until` stays the limit that fired."""
        with _WATCHDOG.lock:
            if not self.fired:
                self.until = until
                _WATCHDOG.lock.notify()

    def watch(self, sock: socket.socket) -> None:
        if sock.fileno() < 0:  # closed: urllib3 connects anew
            return
        with _WATCHDOG.lock:
            self._forget()
            self._watched = socket.fromfd(sock.fileno(), sock.family, sock.type)
            if self.fired:
                self.shut()

    def shut(self) -> None:
        with _WATCHDOG.lock:
            self.fired = True
            if self._watched is not None:
                with contextlib.suppress(OSError):  # already closed by the other end
                    self._watched.shutdown(socket.SHUT_RDWR)

    def _forget(self) -> None:
        if self._watched is not None:
            self._watched.close()
            self._watched = None


class _Watchdog:
    """One thread for every cutoff of the process, asleep until the soonest is due."""

    def __init__(self) -> None:
        self.lock = threading.Condition()  # an RLock: a cutoff takes it again when the watchdog shuts it
        self._armed: set[Cutoff] = set()
        self._thread: threading.Thread | None = None

    def arm(self, cutoff: Cutoff) -> None:
        with self.lock:
            self._armed.add(cutoff)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pinguard-cutoff", daemon=True)
                self._thread.start()
            self.lock.notify()

    def disarm(self, cutoff: Cutoff) -> None:
        with self.lock:
            self._armed.discard(cutoff)

    def _run(self) -> None:
        with self.lock:
            while True:
                now = time.monotonic()
                for cutoff in [c for c in self._armed if c.until <= now]:
                    self._armed.discard(cutoff)
                    cutoff.shut()
                soonest = min((c.until for c in self._armed), default=None)
                self.lock.wait(None if soonest is None else soonest - now)


_WATCHDOG = _Watchdog()


def _watch(sock: socket.socket) -> None:
    cutoff: Cutoff | None = getattr(_current, "cutoff", None)
    if cutoff is not None:
        cutoff.watch(sock)


class _WatchedHTTPConnection(HTTPConnection):
    """A connection whose socket, new (before any TLS handshake) or reused, the thread's cutoff watches."""

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _watch(sock)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        if self.sock is not None:
            _watch(self.sock)
        super().request(*args, **kwargs)


class _WatchedHTTPSConnection(_WatchedHTTPConnection, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class GuardedAdapter(HTTPAdapter):
    """requests' adapter, its connections watched by the cutoff of the thread using them."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}
