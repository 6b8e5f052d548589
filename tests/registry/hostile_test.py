"""A registry that attacks: paths in digests, secrets lured elsewhere, endless or huge answers, lying types.

Every case ends in a `PinguardError` that says what happened (or in the right
answer), with no file outside the cache touched and no secret off its host or
in any output.
"""
from __future__ import annotations

import base64
import dataclasses
import io
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.errors import RegistryError
from pinguard.reference import parse
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import Platform
from pinguard.registry.settings import RegistrySettings, parse_mirrors
from pinguard.resolve.resolver import Resolver
from testing.fake_registry import Drip, FakeRegistry, Redirect, Request, Response, Route, serve_manifests
from testing.images import OCI_MANIFEST, image, multi_platform
from tests.registry.conftest import REGISTRY, settings_for

REPO = "team/model"
IMAGE = image(seed="hostile")
BLOBS = {blob.digest: blob.data for blob in IMAGE.blobs}


def _manifest_with_config(config_digest: str) -> bytes:
    document = json.loads(IMAGE.data)
    document["config"]["digest"] = config_digest
    return json.dumps(document).encode()


@pytest.mark.parametrize("shape", ["sha256:{relative}", "sha256:/{absolute}", "sha512:../../{name}"])
def test_a_digest_in_a_manifest_never_names_a_path(fake: FakeRegistry, tmp_path: Path, shape: str) -> None:
    cache = tmp_path / "cache"
    victim = tmp_path / "victim"
    victim.write_text("precious")
    hostile = shape.format(relative="../../../victim", absolute=str(victim).lstrip("/"), name="victim")
    fake.add(*serve_manifests(REPO, {"v1": (OCI_MANIFEST, _manifest_with_config(hostile))}, blobs=BLOBS))
    with RegistryClient(settings_for(fake.url, tmp_path), RegistryCache(cache)) as client, \
            pytest.raises(RegistryError, match="is not a valid digest"):
        Resolver(client).resolve(parse(f"{REGISTRY}/{REPO}:v1"))
    assert victim.read_text() == "precious"
    assert not fake.requests_to(rf"/v2/{REPO}/blobs/.*")  # nor sent to the registry as a path


def test_a_digest_header_never_names_a_path(fake: FakeRegistry, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    served = {"Docker-Content-Digest": "sha256:../../victim", "Content-Type": OCI_MANIFEST}
    fake.add(Route("HEAD", rf"/v2/{REPO}/manifests/v1", Response(200, served)))
    with RegistryClient(settings_for(fake.url, tmp_path), RegistryCache(tmp_path / "cache")) as client, \
            pytest.raises(RegistryError, match="malformed digest"):
        client.head_manifest(REGISTRY, REPO, "v1")
    assert RegistryCache(tmp_path / "cache").get("sha256:../../victim") is None  # the cache refuses it too
    assert victim.read_text() == "precious"


def test_an_index_entry_with_a_bad_digest_is_refused(fake: FakeRegistry, tmp_path: Path) -> None:
    index = json.loads(multi_platform("hostile-index").data)
    index["manifests"][0]["digest"] = "sha256:../../x"
    fake.add(*serve_manifests(REPO, {"v1": (index["mediaType"], json.dumps(index).encode())}))
    with RegistryClient(settings_for(fake.url, tmp_path)) as client, \
            pytest.raises(RegistryError, match="whose digest is not valid"):
        Resolver(client).resolve(parse(f"{REGISTRY}/{REPO}:v1"))


def test_a_refresh_token_is_never_sent_along_a_redirect_to_another_host(tmp_path: Path) -> None:
    with FakeRegistry() as registry, FakeRegistry() as elsewhere:
        realm = f'Bearer realm="{registry.url}/token",service="registry.example.com"'
        registry.add(Route("POST", "/token", Redirect(f"{elsewhere.url}/token", 307)),
                     Route("*", r"/v2/.*", Response(401, {"Www-Authenticate": realm})))
        docker = tmp_path / ".docker"
        docker.mkdir()
        (docker / "config.json").write_text(json.dumps({"auths": {registry.host: {"identitytoken": "refresh-me"}}}))
        settings = dataclasses.replace(settings_for(registry.url, tmp_path),
                                       env={"HOME": str(tmp_path), "DOCKER_CONFIG": str(docker)})
        with RegistryClient(settings) as client, pytest.raises(RegistryError) as caught:
            client.head_manifest(REGISTRY, REPO, "v1")
        assert "redirected to another host" in str(caught.value)
        assert "refusing to send credentials there" in str(caught.value)
        assert elsewhere.requests == []


def test_an_anonymous_token_request_may_follow_a_redirect(fake: FakeRegistry, tmp_path: Path) -> None:
    with FakeRegistry() as elsewhere:
        elsewhere.add(Route("GET", "/token", Response(200, {}, b'{"token": "t"}')))
        realm = f'Bearer realm="{fake.url}/token",service="registry.example.com"'

        def guarded(request: Request) -> Response | None:
            return None if request.headers.get("Authorization") == "Bearer t" else Response(
                401, {"Www-Authenticate": realm})

        fake.add(Route("GET", "/token", Redirect(f"{elsewhere.url}/token?service=x", 302)),
                 Route("*", r"/v2/.*", guarded), *serve_manifests(REPO, {"v1": (IMAGE.media_type, IMAGE.data)}))
        with RegistryClient(settings_for(fake.url, tmp_path)) as client:
            assert client.head_manifest(REGISTRY, REPO, "v1").digest == IMAGE.digest


def test_credentials_in_a_mirror_url_are_used_and_never_printed(fake: FakeRegistry, tmp_path: Path) -> None:
    expected = "Basic " + base64.b64encode(b"alice:s3cr3t").decode()

    def guarded(request: Request) -> Response | None:
        return None if request.headers.get("Authorization") == expected else Response(
            401, {"Www-Authenticate": 'Basic realm="mirror"'})

    fake.add(Route("*", r"/v2/.*", guarded), *serve_manifests(REPO, {"v1": (IMAGE.media_type, IMAGE.data)},
                                                             blobs=BLOBS))
    out, err = io.StringIO(), io.StringIO()
    mirror = f"{REGISTRY}=http://alice:s3cr3t@{fake.host}"
    status = main(["resolve", "-v", "--mirror", mirror, "--rate", f"{REGISTRY}=100", f"{REGISTRY}/{REPO}:v1"],
                  env={"HOME": str(tmp_path), "PINGUARD_CACHE_DIR": str(tmp_path / "cache")}, stdout=out, stderr=err)
    assert status == 0, err.getvalue()
    assert f"served by   {fake.url} (mirror for {REGISTRY})" in out.getvalue()
    assert "s3cr3t" not in out.getvalue() + err.getvalue()


def test_a_password_in_a_refused_mirror_url_is_not_printed() -> None:
    err = io.StringIO()
    status = main(["resolve", "--mirror", "docker.io=http://alice:s3cr3t@10.1.2.3:5000", "nginx"], env={},
                  stdout=io.StringIO(), stderr=err)
    assert status == 2
    assert "refusing plain HTTP to 10.1.2.3:5000" in err.getvalue()
    assert "s3cr3t" not in err.getvalue()
    mirrors, credentials = parse_mirrors(["docker.io=http://alice:s3cr3t@127.0.0.1:5000/"], None)
    assert mirrors == {"docker.io": "http://127.0.0.1:5000/"}  # loopback, judged without the user info
    assert RegistrySettings(mirrors=mirrors).base_url("docker.io") == "http://127.0.0.1:5000"
    assert credentials == {"docker.io": ("alice", "s3cr3t")}


def test_a_slow_drip_is_bounded_in_total_time(fake: FakeRegistry, tmp_path: Path) -> None:
    body = IMAGE.data
    headers = {"Content-Type": IMAGE.media_type, "Docker-Content-Digest": IMAGE.digest}
    fake.add(Route("GET", rf"/v2/{REPO}/manifests/v1", Drip(Response(200, headers, body), interval=0.05)))
    settings = settings_for(fake.url, tmp_path, read_timeout=1.0)  # each byte comes well within it
    # Only the total-time bound says this: every byte came within the read timeout, and the drip would end.
    with RegistryClient(settings) as client, pytest.raises(RegistryError, match="still arriving after 1 s"):
        client.cached_manifest(REGISTRY, REPO, "v1")


def test_token_answers_are_capped(fake: FakeRegistry, tmp_path: Path) -> None:
    realm = f'Bearer realm="{fake.url}/token",service="registry.example.com"'
    huge = b'{"token": "' + b"t" * (1024 * 1024) + b'"}'
    fake.add(Route("GET", "/token", Response(200, {}, huge)),
             Route("*", r"/v2/.*", Response(401, {"Www-Authenticate": realm})))
    with RegistryClient(settings_for(fake.url, tmp_path)) as client, \
            pytest.raises(RegistryError, match="response larger than 262144 bytes"):
        client.head_manifest(REGISTRY, REPO, "v1")


def test_manifests_are_capped_at_four_mebibytes_unless_configured(fake: FakeRegistry, tmp_path: Path) -> None:
    big = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "padding": "x" * (5 * 1024 * 1024)}).encode()
    fake.add(*serve_manifests(REPO, {"v1": (OCI_MANIFEST, big)}))
    with RegistryClient(settings_for(fake.url, tmp_path)) as client, \
            pytest.raises(RegistryError, match=f"response larger than {4 * 1024 * 1024} bytes"):
        client.cached_manifest(REGISTRY, REPO, "v1")
    roomy = dataclasses.replace(settings_for(fake.url, tmp_path), max_manifest_bytes=8 * 1024 * 1024)
    with RegistryClient(roomy) as client:
        assert client.cached_manifest(REGISTRY, REPO, "v1").data == big


def test_an_index_served_as_an_image_manifest_is_still_checked_for_its_platforms(
        fake: FakeRegistry, tmp_path: Path) -> None:
    index = json.loads(multi_platform("typed-wrong", platforms=("linux/amd64",)).data)
    del index["mediaType"]  # optional in an OCI index: the body's fields must say what it is
    data = json.dumps(index).encode()
    fake.add(*serve_manifests(REPO, {"v1": (OCI_MANIFEST, data)}))
    settings = settings_for(fake.url, tmp_path)
    with RegistryClient(settings) as client:
        resolver = Resolver(client, platforms=[Platform("linux", "arm64")])
        with pytest.raises(RegistryError, match="has no linux/arm64 image"):
            resolver.resolve(parse(f"{REGISTRY}/{REPO}:v1"))
        resolved = Resolver(client).resolve(parse(f"{REGISTRY}/{REPO}:v1"))
    assert resolved.media_type == "application/vnd.oci.image.index.v1+json"
    assert set(resolved.platforms) == {"linux/amd64"}


def test_concurrent_requests_to_a_plain_http_registry_named_directly(fake: FakeRegistry, tmp_path: Path) -> None:
    """The registry speaks no TLS: the first request learns it and every thread then uses plain HTTP."""
    tags = [f"v{n}" for n in range(8)]
    fake.add(*serve_manifests(REPO, {tag: (IMAGE.media_type, IMAGE.data) for tag in tags}, blobs=BLOBS))
    settings = RegistrySettings(env={"HOME": str(tmp_path)}, workers=8)
    for _ in range(2):  # cold, then with the cache of the first
        with RegistryClient(settings, RegistryCache(tmp_path / "cache")) as client:
            references = [parse(f"{fake.host}/{REPO}:{tag}") for tag in tags]
            with ThreadPoolExecutor(8) as pool:
                digests = list(pool.map(lambda r: client.head_manifest(r.registry, r.repository, r.tag).digest,
                                        references))
        assert digests == [IMAGE.digest] * 8
