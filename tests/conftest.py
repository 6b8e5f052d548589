from __future__ import annotations

import hashlib
import ipaddress
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from testing.git_server import GitRepos, GitServer, serve_git
from testing.registry import REGISTRY_BINARY, RunningRegistry, start_registry
from testing.seed import Seeded, seed_dlc

# CI runs the same examples every time: a failure there can be replayed, never a fluke of the draw.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# The stand-in registries answer for public.ecr.aws, which pinguard paces at ECR Public's 1 request/s
# unless told otherwise; tests whose subject is not pacing lift it (tests/registry/quota_test.py paces).
UNPACED = ("--rate", "public.ecr.aws=1000")

# The official helm binaries, one per major version (scripts/install_helm.sh installs them).
HELM_BINARIES = {major: Path(__file__).parents[1] / ".venv" / "helm" / major / "helm" for major in ("3", "4")}
# The official kubectl 1.35 (kustomize 5.7), from npm, as scripts/install_helm.sh installs it.
KUBECTL = Path(__file__).parents[1] / ".venv" / "kubectl" / "kubectl"


@pytest.fixture(params=sorted(HELM_BINARIES), ids=lambda major: f"helm{major}")
def helm(request: pytest.FixtureRequest) -> str:
    """Each helm in turn; a test of one that is not installed is skipped, saying so."""
    binary = HELM_BINARIES[request.param]
    if not binary.is_file():
        pytest.skip(f"no Helm {request.param} at {binary} (scripts/install_helm.sh installs it)")
    return str(binary)


@pytest.fixture
def kubectl() -> str:
    """The official kubectl; in CI its absence fails the test, since setup installs it."""
    if not KUBECTL.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"no kubectl at {KUBECTL}: scripts/install_helm.sh installs it")
        pytest.skip(f"no kubectl at {KUBECTL} (scripts/install_helm.sh installs it)")
    return str(KUBECTL)


@pytest.fixture
def no_helm(monkeypatch: pytest.MonkeyPatch) -> str:
    """PATH without any folder holding a helm, where the scan looks (the process's environment); returned too, for
    the environment a test hands `main`."""
    path = os.pathsep.join(folder for folder in os.environ.get("PATH", "").split(os.pathsep)
                           if folder and not (Path(folder) / "helm").exists())
    monkeypatch.setenv("PATH", path)
    return path


# Real-world files from public repositories (tests/testdata/corpus/SOURCES.md names each one and its license).
CORPUS = Path(__file__).parent / "testdata" / "corpus"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real home folder, docker config or cache."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DOCKER_CONFIG", str(home / ".docker"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for name in ("PINGUARD_CACHE_DIR", "PINGUARD_MIRRORS", "AWS_ACCESS_KEY_ID", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def outside(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """No test reaches past loopback: lookups and connects elsewhere are refused and recorded."""
    attempts: list[str] = []
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def on_loopback(host: object) -> bool:
        try:
            return host == "localhost" or ipaddress.ip_address(str(host)).is_loopback
        except ValueError:
            return False

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not on_loopback(host):
            attempts.append(f"resolve {host}")
            raise socket.gaierror(socket.EAI_NONAME, "off-loopback lookups are refused in tests")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and not on_loopback(address[0]):
            attempts.append(f"connect {address[0]}")
            raise ConnectionRefusedError("off-loopback connections are refused in tests")
        real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    yield attempts
    assert attempts == [], "traffic tried to leave loopback"


def require_registry_tools() -> None:
    missing = [tool for tool in (REGISTRY_BINARY, "skopeo") if shutil.which(tool) is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install {', '.join(missing)} (scripts/setup.sh does)")
        pytest.skip(f"needs {', '.join(missing)}: run scripts/setup.sh")


@dataclass(frozen=True)
class SeededRegistry:
    registry: RunningRegistry
    seeded: Seeded
    workdir: Path

    def skopeo_raw(self, repository: str, tag: str) -> bytes:
        """What an independent client is served for repository:tag."""
        certs = self.workdir / "skopeo-certs"
        certs.mkdir(exist_ok=True)
        args = ["--tls-verify=false"]
        if self.registry.ca_file:
            shutil.copy(self.registry.ca_file, certs / "ca.crt")
            args = [f"--cert-dir={certs}"]
        return subprocess.run(
            ["skopeo", "inspect", "--raw", "--no-creds", *args, f"docker://{self.registry.host}/{repository}:{tag}"],
            check=True, capture_output=True, timeout=60,
        ).stdout


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def token_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeededRegistry]:
    """docker-registry with TLS and bearer-token auth, seeded with DLC-style tags; one per module."""
    require_registry_tools()
    workdir = tmp_path_factory.mktemp("token-registry")
    with start_registry(workdir, tls=True, token_auth=True) as registry:
        yield SeededRegistry(registry, seed_dlc(registry.pusher()), workdir)


@pytest.fixture(scope="module")
def plain_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeededRegistry]:
    """docker-registry over plain HTTP on loopback, seeded; one per module."""
    require_registry_tools()
    workdir = tmp_path_factory.mktemp("plain-registry")
    with start_registry(workdir) as registry:
        yield SeededRegistry(registry, seed_dlc(registry.pusher()), workdir)


# Bare repositories built in the test, and a real git server (git-http-backend) serving them on loopback.
@pytest.fixture
def repos(tmp_path: Path) -> GitRepos:
    return GitRepos(tmp_path / "repositories")


@pytest.fixture
def server(repos: GitRepos) -> Iterator[GitServer]:
    with serve_git(repos.root) as running:
        yield running
