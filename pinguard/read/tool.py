"""Running a tool (git, helm, kubectl) and reading what it writes, bounded in size and in time.

The tool runs in a session of its own, so that past either bound its whole process
group is killed, with the helpers it started (git's https transport, a helm plugin).
Its output is read up to `max_out` bytes; of its error output only the start is kept,
the rest read and dropped (a writer blocked on a full pipe never finishes). The time
bound covers the whole run: start, output and exit.
"""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_READ = 65536


class ToolStopped(Exception):
    """The tool did not run to its end: the caller names the tool and says what it was doing."""


class CannotStart(ToolStopped):
    """The system would not start it; the message is the system's reason."""


class TooMuchOutput(ToolStopped):
    """It wrote more than `max_out` bytes, and was killed."""


class TooSlow(ToolStopped):
    """It had not finished within `timeout` seconds, and was killed."""


@dataclass(frozen=True)
class ToolRun:
    status: int  # its exit status
    out: bytes
    err: bytes  # the start of its error output, `err_kept` bytes at most


def run_tool(argv: Sequence[str], env: Mapping[str, str] | None, *, timeout: float, max_out: int,
             err_kept: int) -> ToolRun:
    """`argv` run in `env` (None: this process's own), with nothing on its input."""
    deadline = time.monotonic() + timeout
    try:
        process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=None if env is None else dict(env),
                                   start_new_session=True)
    except OSError as error:
        raise CannotStart(error.strerror or str(error)) from None
    try:
        out, err = _read_within(process, deadline, max_out, err_kept)
        try:
            return ToolRun(process.wait(timeout=max(0.0, deadline - time.monotonic())), out, err)
        except subprocess.TimeoutExpired:
            raise TooSlow from None
    finally:
        if process.poll() is None:
            _kill(process)
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _read_within(process: subprocess.Popen[bytes], deadline: float, max_out: int,
                 err_kept: int) -> tuple[bytes, bytes]:
    out, err = bytearray(), bytearray()
    with selectors.DefaultSelector() as selector:
        # Both are pipes (Popen's PIPE), never None as their type allows.
        selector.register(process.stdout, selectors.EVENT_READ, out)  # type: ignore[arg-type]
        selector.register(process.stderr, selectors.EVENT_READ, err)  # type: ignore[arg-type]
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TooSlow
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, _READ)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.data is out:
                    out += chunk
                    if len(out) > max_out:
                        raise TooMuchOutput
                else:
                    err += chunk[:max(0, err_kept - len(err))]
    return bytes(out), bytes(err)


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
