"""The first request to a registry learns how to talk to it; those that waited for it then go out together."""
from __future__ import annotations

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

    fake.add(Route("HEAD", rf"/v2/{REPO}/manifests/.+", answer),
             *serve_manifests(REPO, {f"v{i}": (INDEX.media_type, INDEX.data) for i in range(WAITING + 1)}))
    client = RegistryClient(settings_for(fake.url, tmp_path, read_timeout=5), RegistryCache(None))
    with client, ThreadPoolExecutor(WAITING + 1) as pool:
        heads = list(pool.map(lambda i: client.head_manifest(REGISTRY, REPO, f"v{i}"), range(WAITING + 1)))
    assert {head.digest for head in heads} == {INDEX.digest}
    assert len(seen) == WAITING + 1
