"""Resolving references online (`pinguard.resolve.online`) against a FAKE registry on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.errors import NotFound
from pinguard.reference import parse
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import Platform
from pinguard.resolve import online
from pinguard.resolve.online import open_client, resolve_references
from pinguard.resolve.resolved import Resolved
from pinguard.resolve.settings import OnlineSettings
from testing.fake_registry import FakeRegistry, serve_manifests
from testing.images import multi_platform
from tests.registry.conftest import REGISTRY, settings_for

REPO = "deep-learning-containers/ray"
INDEX = multi_platform("online")


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    with FakeRegistry() as started:
        yield started


def _settings(fake: FakeRegistry, tmp_path: Path) -> OnlineSettings:
    return OnlineSettings(settings_for(fake.url, tmp_path), (Platform("linux", "amd64"),), tmp_path / "cache")


def test_each_reference_is_resolved_or_has_its_error(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(*serve_manifests(REPO, {"v1": (INDEX.media_type, INDEX.data)}))
    served, missing = parse(f"{REGISTRY}/{REPO}:v1"), parse(f"{REGISTRY}/{REPO}:v9")
    outcomes = resolve_references([served, missing], _settings(fake, tmp_path))
    assert isinstance(outcomes[served], Resolved)
    assert outcomes[served].digest == INDEX.digest
    assert isinstance(outcomes[missing], NotFound)


def test_the_runs_client_is_used_when_one_is_open(fake: FakeRegistry, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fake.add(*serve_manifests(REPO, {"v1": (INDEX.media_type, INDEX.data)}))
    settings = _settings(fake, tmp_path)
    reference = parse(f"{REGISTRY}/{REPO}:v1")
    with open_client(settings) as client:
        monkeypatch.setattr(online, "open_client", _no_second_client)
        outcome = resolve_references([reference], settings, client)[reference]
    assert isinstance(outcome, Resolved) and outcome.digest == INDEX.digest


def _no_second_client(settings: OnlineSettings) -> RegistryClient:
    raise AssertionError("a second client was opened")


def test_the_client_keeps_answers_under_the_cache_directory(fake: FakeRegistry, tmp_path: Path) -> None:
    fake.add(*serve_manifests(REPO, {"v1": (INDEX.media_type, INDEX.data)}))
    reference = parse(f"{REGISTRY}/{REPO}:v1")
    resolve_references([reference], _settings(fake, tmp_path))
    assert any((tmp_path / "cache").rglob("*"))
