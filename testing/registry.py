"""Start Debian's docker-registry (distribution 2.8) for tests and demos."""
from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
import yaml

from testing.push import Pusher
from testing.tls import make_tls
from testing.token_server import PUSH_CREDENTIALS, TokenServer

REGISTRY_BINARY = "/usr/bin/docker-registry"
SERVICE = "pinguard-test-registry"
STARTUP_TIMEOUT_S = 10.0


@dataclass
class RunningRegistry:
    """Where a started registry listens and how to reach it."""

    host: str
    url: str
    ca_file: str | None
    token_server: TokenServer | None
    push_credentials: tuple[str, str] | None

    def pusher(self) -> Pusher:
        return Pusher(self.url, ca_file=self.ca_file, credentials=self.push_credentials)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_until_serving(
    url: str, ca_file: str | None, process: subprocess.Popen[bytes], log: Path
) -> None:
    """Poll /v2/ until it answers at all (200, or 401 under token auth)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    with requests.Session() as session:
        session.trust_env = False  # no proxies for 127.0.0.1, and verify means ca_file
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"docker-registry exited with {process.returncode}:\n{_tail(log)}"
                )
            try:
                session.get(f"{url}/v2/", verify=ca_file or True, timeout=1).close()
                return
            except requests.exceptions.SSLError:
                raise  # listening but our CA does not verify it: waiting will not help
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"docker-registry not serving {url} after {STARTUP_TIMEOUT_S}s:\n{_tail(log)}"
                )
            time.sleep(0.02)


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@contextmanager
def start_registry(
    workdir: Path,
    *,
    tls: bool = False,
    token_auth: bool = False,
    token_expires_in: int = 300,
) -> Iterator[RunningRegistry]:
    """Run docker-registry with storage, config and logs under workdir until the block exits."""
    if not os.access(REGISTRY_BINARY, os.X_OK):
        raise RuntimeError(f"{REGISTRY_BINARY} not found; install Debian's docker-registry package")
    workdir.mkdir(parents=True, exist_ok=True)
    host = f"127.0.0.1:{_free_port()}"
    url = f"{'https' if tls else 'http'}://{host}"
    config: dict[str, Any] = {
        "version": 0.1,
        "log": {"level": "error", "accesslog": {"disabled": True}},
        "storage": {
            "filesystem": {"rootdirectory": str(workdir / "storage")},
            "delete": {"enabled": True},
            "maintenance": {"uploadpurging": {"enabled": False}},
        },
        # A fixed secret avoids the random-secret warning and keeps restarts compatible.
        "http": {"addr": host, "secret": "pinguard-test-secret"},
    }
    with ExitStack() as stack:
        tls_files = make_tls(workdir / "tls") if tls else None
        if tls_files:
            config["http"]["tls"] = {
                "certificate": str(tls_files.cert_file),
                "key": str(tls_files.key_file),
            }
        token_server = None
        if token_auth:
            token_server = stack.enter_context(
                TokenServer(
                    expires_in=token_expires_in,
                    cert_file=str(tls_files.cert_file) if tls_files else None,
                    key_file=str(tls_files.key_file) if tls_files else None,
                )
            )
            bundle = token_server.write_root_bundle(workdir / "token-signing.crt")
            config["auth"] = {
                "token": {
                    "realm": token_server.realm,
                    "service": SERVICE,
                    "issuer": token_server.issuer,
                    "rootcertbundle": str(bundle),
                }
            }
        config_file = workdir / "config.yml"
        config_file.write_text(yaml.safe_dump(config, sort_keys=False))
        log = workdir / "registry.log"
        # REGISTRY_* variables override config.yml; a stray one must not leak in.
        env = {k: v for k, v in os.environ.items() if not k.startswith("REGISTRY_")}
        log_handle = stack.enter_context(log.open("ab"))
        process = subprocess.Popen(
            [REGISTRY_BINARY, "serve", str(config_file)],
            stdin=subprocess.DEVNULL,
            stdout=log_handle,
            stderr=subprocess.STDOUT,
            env=env,
        )
        stack.callback(_terminate, process)
        ca_file = str(tls_files.ca_file) if tls_files else None
        _wait_until_serving(url, ca_file, process, log)
        yield RunningRegistry(
            host=host,
            url=url,
            ca_file=ca_file,
            token_server=token_server,
            push_credentials=PUSH_CREDENTIALS if token_auth else None,
        )


def _terminate(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
