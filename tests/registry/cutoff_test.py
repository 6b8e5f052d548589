"""A `Cutoff` aborts the connection it watches once its limit passes, and only then."""

from __future__ import annotations

import threading
import time
from typing import cast

from pinguard.registry.cutoff import _WATCHDOG, Cutoff
from pinguard.registry.wire import Connection


class Watched:
    """Stands in for a connection: records that it was aborted."""

    def __init__(self) -> None:
        self.aborted = threading.Event()

    def abort(self) -> None:
        self.aborted.set()


def watched() -> tuple[Watched, Connection]:
    stand_in = Watched()
    return stand_in, cast(Connection, stand_in)


def test_a_limit_that_passes_aborts_the_connection() -> None:
    stand_in, connection = watched()
    limit = time.monotonic() + 60
    with Cutoff(limit, body_seconds=60, cap=limit) as cutoff:
        cutoff.watch(connection)
        _WATCHDOG.shut_due(limit - 1)  # the watchdog's step, at a time it chooses: before the limit
        assert not stand_in.aborted.is_set() and not cutoff.fired
        _WATCHDOG.shut_due(limit)
        assert stand_in.aborted.is_set()
    assert cutoff.fired


def test_a_cutoff_left_before_its_limit_aborts_nothing() -> None:
    stand_in, connection = watched()
    limit = time.monotonic() + 60
    with Cutoff(limit, body_seconds=60, cap=limit) as cutoff:
        cutoff.watch(connection)
    _WATCHDOG.shut_due(limit + 1)  # past the limit: nothing armed is left of it
    assert not stand_in.aborted.is_set()
    assert not cutoff.fired


def test_a_connection_watched_after_the_limit_fired_is_aborted_at_once() -> None:
    stand_in, connection = watched()
    cutoff = Cutoff(time.monotonic() + 60, body_seconds=60, cap=time.monotonic() + 60)
    cutoff.shut()
    cutoff.watch(connection)
    assert stand_in.aborted.is_set()


def test_the_body_limit_never_passes_the_cap() -> None:
    cap = time.monotonic() + 30
    with Cutoff(time.monotonic() + 10, body_seconds=3600, cap=cap) as cutoff:
        cutoff.reading_body()
        assert cutoff.in_body
        assert cutoff.until == cap


def test_the_body_limit_replaces_the_headers_limit() -> None:
    headers_by = time.monotonic() + 0.05
    with Cutoff(headers_by, body_seconds=3600, cap=time.monotonic() + 7200) as cutoff:
        cutoff.reading_body()
        assert cutoff.until > headers_by + 60
        assert not cutoff.fired


def test_a_fired_cutoff_keeps_the_limit_that_fired() -> None:
    cutoff = Cutoff(time.monotonic() + 60, body_seconds=3600, cap=time.monotonic() + 7200)
    fired_at = cutoff.until
    cutoff.shut()
    cutoff.reading_body()
    assert cutoff.until == fired_at
    assert not cutoff.in_body
