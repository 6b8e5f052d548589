"""The time as the lock records it."""
from __future__ import annotations

import datetime as dt

from pinguard.clock import utc_now


def test_now_is_written_in_utc_to_the_second() -> None:
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    written = utc_now()
    after = dt.datetime.now(dt.UTC)
    assert written.endswith("Z") and len(written) == len("2025-06-01T12:00:00Z")
    assert before <= dt.datetime.strptime(written, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC) <= after
