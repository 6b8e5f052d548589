"""The first request to a registry learns how to talk to it; those that waited for it then go out together."""
from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from testing.fake_registry import Action, FakeRegistry, Request, Route, error_response, serve_manifests
from testing.images import multi_platform
from tests.registry.conftest import REGISTRY, settings_for

REPO = "deep-learning-containers/ray"
INDEX = multi_platform("first-request")
WAITING = 7
TAGS = {f"v{i}": (INDEX.media_type, INDEX.data) for i in range(WAITING + 1)}


class Gate:
    """Holds every request but the first until all `count` have arrived or `patience` has passed: the
    requests that arrive while it holds were sent together."""

    def __init__(self, count: int, patience: float, first_answers_after: float | None = None) -> None:
        self.arrived = 0
        self.released = threading.Event()
        self._count = count
        self._patience = patience
        self._first_after = first_answers_after
        self._lock = threading.Lock()
        self._all_in = threading.Event()

    def answer(self, request: Request) -> Action | None:
        with self._lock:
            self.arrived += 1
            number = self.arrived
            if number == self._count:
                self._all_in.set()
        if number == 1 and self._first_after is not None:
            time.sleep(self._first_after)  # long enough for every other request to queue behind it
            return None
        if not self.released.wait(self._patience):
            return error_response(400, "UNSUPPORTED", "sent one at a time")
        return None

    def wait_for_all(self) -> bool:
        return self._all_in.wait(self._patience)


def _worker_stacks() -> dict[str, list[str]]:
    """The function names on the stack of each worker thread, innermost last."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    stacks = {}
    for ident, frame in sys._current_frames().items():
        if not names.get(ident, "").startswith("worker"):
            continue
        functions: list[str] = []
        walked = frame
        while walked is not None:
            functions.append(walked.f_code.co_qualname)
            walked = walked.f_back
        stacks[names[ident]] = functions[::-1]
    return stacks


def _heads(client: RegistryClient, pool: ThreadPoolExecutor) -> list[str | None]:
    return [head.digest for head in pool.map(lambda i: client.head_manifest(REGISTRY, REPO, f"v{i}"),
                                             range(WAITING + 1))]


def test_no_worker_waits_on_the_first_request_once_it_returned(fake: FakeRegistry, tmp_path: Path) -> None:
    # The first request learns that the registry asks for no credentials; the others queue behind it,
    # then are held by the registry until all of them are in flight (or until it gives up on that).
    gate = Gate(WAITING + 1, patience=3, first_answers_after=0.3)
    fake.add(Route("HEAD", rf"/v2/{REPO}/manifests/.+", gate.answer), *serve_manifests(REPO, TAGS))
    client = RegistryClient(settings_for(fake.url, tmp_path, read_timeout=5), RegistryCache(None))
    with client, ThreadPoolExecutor(1) as driver, ThreadPoolExecutor(WAITING + 1, thread_name_prefix="worker") as pool:
        heads = driver.submit(_heads, client, pool)
        all_in = gate.wait_for_all()
        stacks = _settled_stacks()  # the first has returned; the others are held by the registry
        # Blocked on the lock the first request held, a worker's innermost Python frame is Transport.request.
        waiting = [name for name, stack in stacks.items() if stack[-1] == "Transport.request"]
        answering = [name for name, stack in stacks.items() if "Connection.receive" in stack]
        assert waiting == []
        assert len(answering) == WAITING  # every other request is on the network at once
        assert all_in
        gate.released.set()
        assert heads.result() == [INDEX.digest] * (WAITING + 1)


def _settled_stacks() -> dict[str, list[str]]:
    """The workers' stacks once each is waiting for an answer, or after a second: a request the registry
    has received may not yet be read by a thread still on its way back from sending it."""
    patience = time.monotonic() + 1
    while True:
        stacks = _worker_stacks()
        if sum("Connection.receive" in stack for stack in stacks.values()) == WAITING or time.monotonic() > patience:
            return stacks
        time.sleep(0.01)


def test_a_registry_known_to_ask_for_no_credentials_gets_every_request_at_once(fake: FakeRegistry,
                                                                               tmp_path: Path) -> None:
    fake.add(*serve_manifests(REPO, TAGS))
    cache = RegistryCache(tmp_path / "cache")
    with RegistryClient(settings_for(fake.url, tmp_path), cache) as client:
        client.head_manifest(REGISTRY, REPO, "v0")  # learns that no credentials are asked for
    gate = Gate(WAITING + 1, patience=2)  # no first request goes alone: none is held back
    fake.routes.insert(0, Route("HEAD", rf"/v2/{REPO}/manifests/.+", gate.answer))
    client = RegistryClient(settings_for(fake.url, tmp_path, read_timeout=5), RegistryCache(tmp_path / "cache"))
    with client, ThreadPoolExecutor(1) as driver, ThreadPoolExecutor(WAITING + 1) as pool:
        heads = driver.submit(_heads, client, pool)
        assert gate.wait_for_all()
        gate.released.set()
        assert heads.result() == [INDEX.digest] * (WAITING + 1)


def test_requests_queued_behind_the_first_are_sent_together(fake: FakeRegistry, tmp_path: Path) -> None:
    # The registry answers the first request late and the others only when all of them are in flight:
    # were they sent one at a time, the barrier would break and every one of them fail.
    together = threading.Barrier(WAITING, timeout=2)  # within the client's read timeout
    seen = []
    lock = threading.Lock()

    def answer(request: Request) -> Action | None:
        with lock:
            seen.append(request)
            first = len(seen) == 1
        if first:
            time.sleep(0.5)  # long enough for every other request to queue behind it
            return None
        try:
            together.wait()
        except threading.BrokenBarrierError:
            return error_response(400, "UNSUPPORTED", "sent one at a time")
        return None

    fake.add(Route("HEAD", rf"/v2/{REPO}/manifests/.+", answer), *serve_manifests(REPO, TAGS))
    client = RegistryClient(settings_for(fake.url, tmp_path, read_timeout=5), RegistryCache(None))
    with client, ThreadPoolExecutor(WAITING + 1) as pool:
        heads = list(pool.map(lambda i: client.head_manifest(REGISTRY, REPO, f"v{i}"), range(WAITING + 1)))
    assert {head.digest for head in heads} == {INDEX.digest}
    assert len(seen) == WAITING + 1


