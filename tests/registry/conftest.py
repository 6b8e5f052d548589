"""A fake registry per test, and a client that reaches it with short timeouts and retries."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.settings import RegistrySettings, RetryPolicy
from pinguard.registry.transport import Transport
from testing.fake_registry import FakeRegistry

REGISTRY = "public.ecr.aws"  # the canonical name the fake stands in for
ATTEMPTS = 4


def settings_for(url: str, home: Path, read_timeout: float = 0.5) -> RegistrySettings:
    return RegistrySettings(
        mirrors={REGISTRY: url},
        retry=RetryPolicy(attempts=ATTEMPTS, base_delay=0.01, max_delay=0.05, budget=5),
        read_timeout=read_timeout,
        connect_timeout=0.5,
        env={"HOME": str(home)},  # no docker config of the machine running the tests
        rates={REGISTRY: 1000.0},  # faults, not pacing, are these tests' subject (quota_test.py paces)
        timeout=30.0,
    )


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    with FakeRegistry() as started:
        yield started


@pytest.fixture
def client(fake: FakeRegistry, tmp_path: Path) -> Iterator[RegistryClient]:
    with RegistryClient(settings_for(fake.url, tmp_path), RegistryCache(tmp_path / "cache")) as opened:
        yield opened


@pytest.fixture
def transport(fake: FakeRegistry, tmp_path: Path) -> Iterator[Transport]:
    with RegistryClient(settings_for(fake.url, tmp_path), RegistryCache(None)) as opened:
        yield opened.transport(REGISTRY)
