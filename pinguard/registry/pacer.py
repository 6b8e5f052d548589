"""How fast pinguard may ask one registry: a token bucket shared by every thread of a run.

ECR Public allows one request a second per address anonymously and ten with AWS
credentials, and answers 429 past that, without Retry-After. Each registry gets
one `Pacer`; every request to its host takes a turn first, turns `1 / rate`
apart, with at most `workers` requests in flight.

A 429 is a wait, not a failure: the request waits for another turn, and does
not use up the attempts meant for 5xx and dropped connections. The rate halves
(once for all the requests that were in flight together, not once per
refusal); with Retry-After every request to the registry also pauses that
long. Each answer that is not a 429 then raises the rate by a small step (10%
of the rate it was lowered to), up to the configured rate. A registry without
a configured rate is not held back until its first 429, which holds it to
half the rate of the second before.

The run has one deadline: a turn that would come after it is refused at once,
with a message naming the registry and the rate it was held to.
"""
from __future__ import annotations

import collections
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pinguard.errors import DeadlinePassed
from pinguard.registry.settings import Quota

if TYPE_CHECKING:  # settings import this module, and offline commands import settings
    from pinguard.registry.wire import Response

log = logging.getLogger("pinguard.registry")

MIN_RATE = 0.05  # requests per second: however often refused, one request every 20 s still goes
_DECREASE = 0.5  # the rate is multiplied by this on a 429 without Retry-After
_INCREASE = 0.1  # a success adds this share of the rate set at the last slow-down
# Turns are spaced a little wider than 1/rate: a request sent late (a thread woken late) must not
# reach the registry's bucket early against the next one. Costs 2% of the pace, plus up to 5 ms a
# turn (at most 5% of the interval, so that a high rate is not held back by it).
_SPACING = 1.02
_SPACING_SLACK = 0.005


@dataclass(frozen=True)
class Deadline:
    at: float  # on the pacer's clock (time.monotonic)
    seconds: float  # the timeout it came from, for messages

    def passed(self, registry: str, when: str) -> DeadlinePassed:
        """The error for a request to `registry` the deadline stopped; `when` says at what point ("first")."""
        return DeadlinePassed(registry, f"{registry}: the run's deadline ({self.seconds:g} s, --timeout) came {when}")


class Pacer:
    def __init__(self, registry: str, quota: Quota, deadline: Deadline, workers: int,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.registry = registry
        self.quota = quota
        self.throttled = 0  # 429s received
        self._deadline = deadline
        self._clock = clock
        self._sleep = sleep
        self._rate = quota.rate
        self._step = 0.0  # set at each slow-down
        self._next = 0.0  # the earliest time the next turn may start
        self._paused_until = 0.0  # Retry-After
        self._last_decrease = float("-inf")
        self._slowdowns = 0
        self._recent: collections.deque[float] = collections.deque()  # turns of the last second, while unlimited
        self._lock = threading.Lock()
        self._in_flight = threading.BoundedSemaphore(max(1, workers))

    @property
    def rate(self) -> float | None:
        return self._rate

    def describe(self) -> str:
        return self.quota.describe(self._rate)

    def send(self, exchange: Callable[[], Response]) -> Response:
        """`exchange()` in its turn; after a 429 it waits for another turn and is sent again."""
        while True:
            with self._in_flight:
                turn = self._take_turn()
                response = exchange()
            if response.status_code != 429:
                self._succeeded()
                return response
            self._refused(turn, retry_after(response.headers.get("Retry-After")))

    def _take_turn(self) -> float:
        """Wait for a turn; one booked before a slow-down or a pause is booked again after it."""
        while True:
            with self._lock:
                now = self._clock()
                turn = max(now, self._next, self._paused_until)
                if turn > self._deadline.at:
                    raise self._deadline.passed(self.registry, f"first; {self.describe()}")
                if self._rate is None:
                    self._recent.append(turn)
                    while self._recent[0] <= turn - 1.0:
                        self._recent.popleft()
                else:
                    self._next = turn + self._interval()
                booked = self._slowdowns
            if turn > now:
                self._sleep(turn - now)
            with self._lock:
                if self._slowdowns == booked:
                    return turn

    def _interval(self) -> float:
        assert self._rate is not None
        return _SPACING / self._rate + min(_SPACING_SLACK, 0.05 / self._rate)

    def _succeeded(self) -> None:
        with self._lock:
            if self._rate is not None and (self.quota.rate is None or self._rate < self.quota.rate):
                self._rate = min(self._rate + self._step, self.quota.rate or float("inf"))

    def _refused(self, turn: float, after: float | None) -> None:
        with self._lock:
            self.throttled += 1
            now = self._clock()
            slowed = False
            if after is not None and now + after > self._paused_until:
                self._paused_until = now + after
                slowed = True
            if turn > self._last_decrease:  # else sent before the last slow-down, which answered for it
                # The first 429 of a registry nobody said was limited starts from the pace of the last second.
                current = len(self._recent) if self._rate is None else self._rate
                self._rate = max(MIN_RATE, current * _DECREASE)
                self._step = self._rate * _INCREASE
                self._last_decrease = now
                self._next = now + self._interval()
                slowed = True
            if slowed:
                self._slowdowns += 1  # turns booked at the old pace are booked again
                log.debug("%s: 429%s; now %s", self.registry,
                          f" with Retry-After {after:g} s" if after is not None else "", self.describe())


_SECONDS = re.compile(r"[0-9]{1,12}")


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    if _SECONDS.fullmatch(value.strip()):  # ASCII digits only: str.isdigit() takes '²', which float() refuses
        return float(value.strip())
    import email.utils  # 14 ms of every command's start-up when imported with this module, for a rare header

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError):  # a year past what datetime holds
        return None
    return max(0.0, when.timestamp() - time.time())
