"""A fake target registry for the copy's unit tests, and the transport that reaches it."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.settings import RegistrySettings, RetryPolicy
from pinguard.registry.transport import Transport
from testing.fake_registry import FakeRegistry

TARGET = "registry.example"  # the name the fake answers for


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    with FakeRegistry() as started:
        yield started


@pytest.fixture
def transport(fake: FakeRegistry, tmp_path: Path) -> Iterator[Transport]:
    settings = RegistrySettings(mirrors={TARGET: fake.url}, env={"HOME": str(tmp_path)}, timeout=30.0,
                                retry=RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.01, budget=1))
    with RegistryClient(settings, RegistryCache(None)) as client:
        yield client.transport(TARGET)
