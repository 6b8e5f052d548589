"""The test harness itself: what `testing` pushes is what a real client pulls.

skopeo is the independent witness here; if these fail, registry tests built on
the harness cannot be trusted either.
"""
from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

import testing.registry
from testing.images import MANIFEST_MEDIA_TYPES, OCI_MANIFEST, image, multi_platform
from testing.registry import REGISTRY_BINARY, SERVICE, RunningRegistry, start_registry
from testing.seed import REPOSITORY, Seeded, main, repush_moving, seed_dlc
from testing.token_server import PUSH_CREDENTIALS, READ_CREDENTIALS, TokenServer

pytestmark = [
    pytest.mark.registry,
    pytest.mark.skipif(
        not os.access(REGISTRY_BINARY, os.X_OK) or shutil.which("skopeo") is None,
        reason="needs Debian's docker-registry and skopeo",
    ),
]

SINGLE_MANIFEST_TAGS = (
    "train-ml-cuda-v1.0.0",
    "train-ml-cuda-v1.0",
    "train-ml-cpu-v1.1",
    "train-ml-cpu-v1.1.0",
)


@dataclass
class SeededRegistry:
    """A started, seeded registry and the skopeo flags that reach it."""

    registry: RunningRegistry
    seeded: Seeded
    tls_args: tuple[str, ...]


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _tls_args(registry: RunningRegistry, workdir: Path) -> tuple[str, ...]:
    if registry.ca_file is None:
        return ("--tls-verify=false",)
    cert_dir = workdir / "skopeo-certs"
    cert_dir.mkdir()
    shutil.copy(registry.ca_file, cert_dir / "ca.crt")
    return ("--cert-dir", str(cert_dir))


def skopeo(
    target: SeededRegistry, reference: str, *args: str, creds: tuple[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run `skopeo inspect` against target; anonymous unless creds are given."""
    auth = ("--creds", ":".join(creds)) if creds else ("--no-creds",)
    return subprocess.run(
        [
            "skopeo",
            "inspect",
            *target.tls_args,
            *auth,
            *args,
            f"docker://{target.registry.host}/{reference}",
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeededRegistry]:
    workdir = tmp_path_factory.mktemp("plain")
    with start_registry(workdir) as registry:
        yield SeededRegistry(registry, seed_dlc(registry.pusher()), _tls_args(registry, workdir))


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeededRegistry]:
    workdir = tmp_path_factory.mktemp("secure")
    with start_registry(workdir, tls=True, token_auth=True) as registry:
        yield SeededRegistry(registry, seed_dlc(registry.pusher()), _tls_args(registry, workdir))


@pytest.fixture(params=["plain", "secure"])
def served(request: pytest.FixtureRequest) -> SeededRegistry:
    target: SeededRegistry = request.getfixturevalue(request.param)
    return target


def test_images_are_deterministic() -> None:
    assert image(seed="a").digest == image(seed="a").digest
    assert image(seed="a").digest != image(seed="b").digest
    assert multi_platform("m", docker=True).digest == multi_platform("m", docker=True).digest


def test_every_tag_serves_the_pushed_bytes(served: SeededRegistry) -> None:
    for tag, digest in served.seeded.tags.items():
        result = skopeo(served, f"{REPOSITORY}:{tag}", "--raw")
        assert result.returncode == 0, result.stderr.decode()
        assert _sha256(result.stdout) == digest, tag


def test_single_manifest_digest_matches(served: SeededRegistry) -> None:
    for tag in SINGLE_MANIFEST_TAGS:
        result = skopeo(served, f"{REPOSITORY}:{tag}", "--format", "{{.Digest}}")
        assert result.returncode == 0, result.stderr.decode()
        assert result.stdout.decode().strip() == served.seeded.tags[tag]


def test_platform_children_are_served_by_digest(plain: SeededRegistry) -> None:
    platforms = plain.seeded.platforms
    assert set(platforms["multi-v1"]) == {"linux/amd64", "linux/arm64"}
    assert set(platforms["list-v1"]) == {"linux/amd64", "linux/arm64"}
    # SOCI indexes and attestations are artifacts, not platforms.
    assert set(platforms["latest"]) == {"linux/amd64"}
    assert set(platforms["attest-v1"]) == {"linux/amd64"}
    for tag in ("multi-v1", "list-v1", "latest", "attest-v1"):
        for digest in platforms[tag].values():
            result = skopeo(plain, f"{REPOSITORY}@{digest}", "--raw")
            assert result.returncode == 0, result.stderr.decode()
            assert _sha256(result.stdout) == digest


def test_moving_tags_share_digests(plain: SeededRegistry) -> None:
    tags = plain.seeded.tags
    assert tags["train-ml-cuda-v1.0"] == tags["train-ml-cuda-v1.0.0"]
    assert tags["train-ml-cuda-v1.1"] == tags["train-ml-cuda-v1.1.2"] == tags["latest"]
    frozen = [tags[f"train-ml-cuda-v1.{n}"] for n in ("0.0", "1.0", "1.1", "1.2")]
    assert len(set(frozen)) == len(frozen)


def test_anonymous_pull_of_private_is_refused(secure: SeededRegistry) -> None:
    digest = secure.registry.pusher().push("private/x", image(seed="private"), "v1")
    refused = skopeo(secure, "private/x:v1", "--raw")
    assert refused.returncode != 0
    assert b"denied" in refused.stderr or b"unauthorized" in refused.stderr
    allowed = skopeo(secure, "private/x:v1", "--raw", creds=READ_CREDENTIALS)
    assert allowed.returncode == 0, allowed.stderr.decode()
    assert _sha256(allowed.stdout) == digest


def test_wrong_credentials_are_refused(secure: SeededRegistry) -> None:
    result = skopeo(secure, f"{REPOSITORY}:latest", "--raw", creds=("pusher", "wrong"))
    assert result.returncode != 0
    assert b"invalid username/password" in result.stderr


def test_registry_rejects_tokens_from_another_signer(secure: SeededRegistry) -> None:
    """The registry really checks x5c against rootcertbundle, so auth tests mean something."""
    assert secure.registry.token_server is not None
    now = int(time.time())
    claims = {
        "iss": secure.registry.token_server.issuer,
        "sub": "",
        "aud": SERVICE,
        "exp": now + 300,
        "nbf": now,
        "iat": now,
        "jti": uuid.uuid4().hex,
        "access": [{"type": "repository", "name": REPOSITORY, "actions": ["pull"]}],
    }
    url = f"{secure.registry.url}/v2/{REPOSITORY}/manifests/latest"
    with requests.Session() as session, TokenServer() as stranger:
        session.trust_env = False
        session.verify = secure.registry.ca_file or True
        for signer, status in ((secure.registry.token_server, 200), (stranger, 401)):
            headers = {
                "Accept": ", ".join(MANIFEST_MEDIA_TYPES),
                "Authorization": f"Bearer {signer.sign(claims)}",
            }
            assert session.get(url, headers=headers).status_code == status


def test_registry_hides_oci_content_without_accept(plain: SeededRegistry) -> None:
    """distribution 2.8 answers 404 for OCI content the client did not list in Accept."""
    url = f"{plain.registry.url}/v2/{REPOSITORY}/manifests/train-ml-cuda-v1.0.0"
    with requests.Session() as session:
        session.trust_env = False
        assert session.get(url).status_code == 404
        served = session.get(url, headers={"Accept": OCI_MANIFEST})
        assert served.status_code == 200
        assert served.headers["Docker-Content-Digest"] == plain.seeded.tags["train-ml-cuda-v1.0.0"]


def test_missing_binary_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testing.registry, "REGISTRY_BINARY", str(tmp_path / "absent"))
    with pytest.raises(RuntimeError, match="docker-registry"), start_registry(tmp_path):
        pass


def test_token_server_counts_and_records(secure: SeededRegistry) -> None:
    server = secure.registry.token_server
    assert server is not None
    pusher_basic = "Basic " + base64.b64encode(":".join(PUSH_CREDENTIALS).encode()).decode()
    # One Pusher seeding thirteen tags asks for one token and reuses it.
    assert pusher_basic in server.authorizations
    assert server.scopes_seen.count((f"repository:{REPOSITORY}:pull,push", "pusher")) == 1
    before = server.token_requests
    result = skopeo(secure, f"{REPOSITORY}:latest", "--raw")
    assert result.returncode == 0, result.stderr.decode()
    assert server.token_requests > before
    assert server.scopes_seen[-1] == (f"repository:{REPOSITORY}:pull", None)


def test_repush_moving_moves_only_the_moving_tag(tmp_path: Path) -> None:
    with start_registry(tmp_path) as registry:
        target = SeededRegistry(registry, seed_dlc(registry.pusher()), ("--tls-verify=false",))
        after = repush_moving(registry.pusher())
        before = target.seeded.tags
        assert after.tags["train-ml-cuda-v1.1"] != before["train-ml-cuda-v1.1"]
        assert after.tags["train-ml-cuda-v1.1"] == after.tags["train-ml-cuda-v1.1.3"]
        assert after.tags["train-ml-cuda-v1.1.2"] == before["train-ml-cuda-v1.1.2"]
        for tag in ("train-ml-cuda-v1.1", "train-ml-cuda-v1.1.2", "train-ml-cuda-v1.1.3"):
            result = skopeo(target, f"{REPOSITORY}:{tag}", "--raw")
            assert result.returncode == 0, result.stderr.decode()
            assert _sha256(result.stdout) == after.tags[tag], tag


def test_seed_command_prints_every_tag(
    plain: SeededRegistry, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([plain.registry.url, "--repository", "cli/ray"]) == 0
    printed = dict(line.split(" ") for line in capsys.readouterr().out.splitlines())
    assert printed == {f"cli/ray:{tag}": d for tag, d in plain.seeded.tags.items()}
