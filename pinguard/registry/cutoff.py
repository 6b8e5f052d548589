"""Time limits that hold inside a request, where socket timeouts do not.

A socket's read timeout restarts with every byte, so a server that sends its TLS
handshake, its headers or its body a byte at a time would hold a request as long
as it likes. Each exchange runs under a `Cutoff`: when its time is up, one
watchdog thread aborts its connection, which ends whatever read waits on it.

The watchdog sleeps until the soonest limit and is woken only by a limit sooner
than that: every request's limit lies seconds ahead, so arming one costs a lock
and a comparison, not a thread switch.
"""
from __future__ import annotations

import math
import threading
import time

from pinguard.registry.wire import Connection


class Cutoff:
    """While entered, the connection it watches is aborted at `until` (time.monotonic): the limit of
    the headers first, then, once the body must be read from the socket, `body_seconds` from then
    (never past `cap`)."""

    def __init__(self, until: float, body_seconds: float, cap: float) -> None:
        self.until = until
        self.fired = False
        self.in_body = False  # whether the limit is the body's
        self._body_seconds = body_seconds
        self._cap = cap
        self._connection: Connection | None = None

    def __enter__(self) -> Cutoff:
        _WATCHDOG.arm(self)
        return self

    def __exit__(self, *_: object) -> None:
        with _WATCHDOG.lock:
            _WATCHDOG.disarm(self)
            self._connection = None

    def watch(self, connection: Connection) -> None:
        with _WATCHDOG.lock:
            self._connection = connection
            if self.fired:
                connection.abort()

    def reading_body(self) -> None:
        """The body's limit from now on; once fired, `until` stays the limit that fired."""
        with _WATCHDOG.lock:
            if not self.fired and not self.in_body:
                self.in_body = True
                self.until = min(self._cap, time.monotonic() + self._body_seconds)
                _WATCHDOG.due(self.until)

    def shut(self) -> None:
        with _WATCHDOG.lock:
            self.fired = True
            if self._connection is not None:
                self._connection.abort()


class _Watchdog:
    """One thread for every cutoff of the process, asleep until the soonest is due."""

    def __init__(self) -> None:
        self.lock = threading.Condition()  # an RLock: a cutoff takes it again when the watchdog shuts it
        self._armed: set[Cutoff] = set()
        self._thread: threading.Thread | None = None
        self._wakes_at = math.inf

    def arm(self, cutoff: Cutoff) -> None:
        with self.lock:
            self._armed.add(cutoff)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pinguard-cutoff", daemon=True)
                self._thread.start()
            self.due(cutoff.until)

    def disarm(self, cutoff: Cutoff) -> None:
        with self.lock:
            self._armed.discard(cutoff)

    def due(self, until: float) -> None:
        """A limit at `until`: the thread is woken only when it would otherwise sleep past it."""
        with self.lock:
            if until < self._wakes_at:
                self._wakes_at = until
                self.lock.notify()

    def shut_due(self, now: float) -> None:
        """Shut every armed cutoff whose limit is `now` or before; the thread wakes next at the soonest left."""
        with self.lock:
            for cutoff in [c for c in self._armed if c.until <= now]:
                self._armed.discard(cutoff)
                cutoff.shut()
            self._wakes_at = min((c.until for c in self._armed), default=math.inf)

    def _run(self) -> None:
        with self.lock:
            while True:
                now = time.monotonic()
                self.shut_due(now)
                self.lock.wait(None if self._wakes_at == math.inf else self._wakes_at - now)


_WATCHDOG = _Watchdog()
