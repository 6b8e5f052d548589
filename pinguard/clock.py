"""The time as pinguard records it (a digest resolved, evidence gathered, an image copied): UTC, to the second."""
from __future__ import annotations

import time


def utc_now() -> str:
    """Now, as the lock records it: RFC 3339 in UTC, `2026-12-02T03:04:05Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
