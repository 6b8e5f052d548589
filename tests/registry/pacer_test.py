"""The pacer on a fake clock: turns, slow-downs on 429, recovery, Retry-After, the deadline."""
from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator

import pytest

from pinguard.errors import DeadlinePassed
from pinguard.registry.pacer import MIN_RATE, Deadline, Pacer
from pinguard.registry.settings import Quota
from pinguard.registry.wire import Headers, Response


class Clock:
    """Time that passes only when someone sleeps."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def answer(status: int, retry_after: str | None = None) -> Response:
    fields = {} if retry_after is None else {"retry-after": ("Retry-After", retry_after)}
    return Response(status, "", Headers(fields), b"", "https://public.ecr.aws/v2/", "GET")


def pacer(clock: Clock, rate: float | None, deadline_in: float = 1000.0, workers: int = 8) -> Pacer:
    return Pacer("public.ecr.aws", Quota(rate, "anonymous"), Deadline(clock.now + deadline_in, deadline_in),
                 workers, clock=clock, sleep=clock.sleep)


def sent_at(clock: Clock, paced: Pacer, answers: Iterator[Response]) -> list[float]:
    """Send once through `paced`, answering each exchange from `answers`; the times each was sent."""
    times: list[float] = []

    def exchange() -> Response:
        times.append(clock.now)
        return next(answers)

    paced.send(exchange)
    return times


def test_turns_are_one_over_the_rate_apart() -> None:
    clock = Clock()
    paced = pacer(clock, 2.0)
    times = [t for _ in range(5) for t in sent_at(clock, paced, iter([answer(200)]))]
    assert times[0] == 100.0  # the first goes at once
    # Spaced a little wider than 1/rate, so that a late thread cannot reach the registry early.
    assert all(0.5 < b - a < 0.5 * 1.05 for a, b in itertools.pairwise(times))


def test_a_429_is_sent_again_at_half_the_rate() -> None:
    clock = Clock()
    paced = pacer(clock, 2.0)
    times = sent_at(clock, paced, iter([answer(429), answer(429), answer(200)]))
    # 2/s, refused: 1/s, refused again: 0.5/s; the success then adds 10% of that.
    assert [b - a for a, b in itertools.pairwise(times)] == [pytest.approx(1.0, rel=0.05), pytest.approx(2.0, rel=0.05)]
    assert paced.rate == pytest.approx(0.55)
    assert paced.throttled == 2


def test_refusals_of_one_burst_slow_down_once() -> None:
    clock = Clock()
    paced = pacer(clock, 4.0)
    turns = [paced._take_turn() for _ in range(3)]  # three requests in flight together
    for turn in turns:
        paced._refused(turn, None)
    assert paced.rate == 2.0


def test_successes_raise_the_rate_slowly_up_to_the_ceiling() -> None:
    clock = Clock()
    paced = pacer(clock, 1.0)
    sent_at(clock, paced, iter([answer(429), answer(200)]))
    assert paced.rate == pytest.approx(0.55)  # halved, then 10% of that for the success
    rates = []
    for _ in range(15):
        sent_at(clock, paced, iter([answer(200)]))
        rates.append(paced.rate)
    assert rates[0] == pytest.approx(0.6)
    assert rates == sorted(rates) and rates[-1] == 1.0  # up, and never past the configured rate
    assert "held to 1 request/s (anonymous)" == paced.describe()


def test_retry_after_pauses_every_turn() -> None:
    clock = Clock()
    paced = pacer(clock, None)
    times = sent_at(clock, paced, iter([answer(429, "7"), answer(200)]))
    assert times == [100.0, 107.0]


def test_an_unlimited_registry_is_held_to_half_its_last_second_after_a_429() -> None:
    clock = Clock()
    paced = pacer(clock, None)
    for _ in range(8):
        sent_at(clock, paced, iter([answer(200)]))
    assert clock.now == 100.0 and paced.rate is None  # not held back
    sent_at(clock, paced, iter([answer(429), answer(200)]))
    assert paced.rate == pytest.approx(4.5 * 1.1)  # nine turns in the last second, halved; then one success
    assert paced.describe() == "held to 4.95 request/s (anonymous)"


def test_the_rate_never_drops_below_the_minimum() -> None:
    clock = Clock()
    paced = pacer(clock, 1.0)
    sent_at(clock, paced, iter([*[answer(429)] * 12, answer(200)]))
    assert paced.rate == pytest.approx(MIN_RATE * 1.1)  # halved down to the floor, then one success


def test_a_turn_past_the_deadline_is_refused_at_once() -> None:
    clock = Clock()
    paced = pacer(clock, 1.0, deadline_in=2.5)
    for _ in range(3):
        sent_at(clock, paced, iter([answer(200)]))
    with pytest.raises(DeadlinePassed) as caught:
        sent_at(clock, paced, iter([answer(200)]))
    assert clock.now < 102.5  # not slept until the deadline: refused as soon as the turn was known to be late
    assert caught.value.registry == "public.ecr.aws"
    assert str(caught.value) == ("public.ecr.aws: the run's deadline (2.5 s, --timeout) came first; "
                                 "held to 1 request/s (anonymous)")


def test_threads_share_the_bucket() -> None:
    """Real threads and the real clock: however many ask at once, turns stay 1/rate apart."""
    paced = Pacer("r", Quota(40.0), Deadline(time.monotonic() + 60, 60), workers=8)
    times: list[float] = []
    lock = threading.Lock()

    def exchange() -> Response:
        with lock:
            times.append(time.monotonic())
        return answer(200)

    threads = [threading.Thread(target=lambda: [paced.send(exchange) for _ in range(5)]) for _ in range(8)]
    begin = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    times.sort()
    assert len(times) == 40
    # Sleeps end late, never early: the k-th send comes no sooner than k turns after the start, however late the
    # threads were scheduled (a busy machine bunches sends that woke late, never moves one before its turn).
    assert [k for k, at in enumerate(times) if at < begin + k / 40 - 0.001] == []
