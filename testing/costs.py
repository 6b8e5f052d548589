"""What a piece of work costs, as the hostile-input tests measure it: CPU time and peak memory.

Growth is judged by ratios between two input sizes, never by a wall time: CPU time
is what the work itself spent, whatever else a loaded machine runs.
"""
from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def cpu_seconds(work: Callable[[], object], runs: int = 2) -> float:
    """CPU seconds `work` takes: the fastest of `runs` runs, without the garbage collector, whose pauses
    grow with every object alive in the process rather than with the work."""
    seconds = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            start = time.process_time()
            work()
            seconds.append(time.process_time() - start)
    finally:
        gc.enable()
    return min(seconds)


def peak_memory(work: Callable[[], T]) -> tuple[T, int]:
    """What `work` returns, and the most memory it held at once, in bytes, as tracemalloc counts it."""
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
