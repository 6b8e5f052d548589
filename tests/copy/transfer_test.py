"""Copying from a source as ECR Public serves it: blobs redirected to a CDN, referrers through the OCI API,
into a real registry without that API. The source is a FAKE registry whose requests the tests read back."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.copy.plan import Selection, plan_copy
from pinguard.copy.transfer import Copier
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.settings import RegistrySettings, RetryPolicy
from testing.copying import SOURCE, entry, image_of, layer, sbom_referrer, served, sha256, tags_of
from testing.fake_registry import FakeRegistry, Redirect, Request, Response, Route, serve_manifests, serve_referrers
from testing.images import Manifest
from testing.registry import RunningRegistry, start_registry
from tests.conftest import require_registry_tools

pytestmark = pytest.mark.registry

CHUNK = 64 * 1024
IMAGE = image_of([layer("base", 5 * CHUNK + 17), layer("top", 3000)], seed="fake")
SBOM = sbom_referrer(IMAGE)


def blobs_of(*manifests: Manifest) -> dict[str, bytes]:
    return {blob.digest: blob.data for manifest in manifests for blob in manifest.blobs}


def cdn_range(request: Request) -> Response:
    """A CDN's answer to a range request: 206 and the bytes asked for."""
    data = blobs_of(IMAGE, SBOM)[request.bare_path.rsplit("/", 1)[1]]
    start, end = map(int, re.fullmatch(r"bytes=(\d+)-(\d+)", request.headers["Range"]).groups())  # type: ignore[union-attr]
    headers = {"Content-Range": f"bytes {start}-{end}/{len(data)}", "Content-Type": "application/octet-stream"}
    return Response(206, headers, data[start:end + 1])


@pytest.fixture
def target(tmp_path: Path) -> Iterator[RunningRegistry]:
    require_registry_tools()
    with start_registry(tmp_path / "target") as started:
        yield started


def test_cdn_ranges_go_straight_to_the_cdn_and_referrers_are_listed_for_a_target_without_the_api(
        target: RunningRegistry, tmp_path: Path) -> None:
    manifests = {"v1": (IMAGE.media_type, IMAGE.data), SBOM.digest: (SBOM.media_type, SBOM.data)}
    with FakeRegistry([Route("GET", r"/cdn/.+", cdn_range)]) as cdn, FakeRegistry() as source:
        source.routes += [
            Route("GET", r"/v2/team/a/blobs/.+", lambda request: Redirect(f"{cdn.url}/cdn/{request.bare_path[-71:]}")),
            *serve_referrers("team/a", manifests),
            *serve_manifests("team/a", manifests),
        ]
        settings = RegistrySettings(mirrors={SOURCE: source.url}, rates={SOURCE: 1000.0}, env={"HOME": str(tmp_path)},
                                    retry=RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.01, budget=2))
        with RegistryClient(settings, RegistryCache(None)) as client:
            plan = plan_copy(client, entry("team/a", "v1", IMAGE), f"{target.host}/m/team/a", Selection(referrers=True))
            (outcome,) = Copier(client, chunk=CHUNK).copy([plan])
        assert outcome.errors == []
        assert (outcome.tally.uploaded, outcome.tally.manifests) == (5, 3)  # config, 2 layers, SBOM's 2; 2 + the tag
        blob_requests = source.requests_to(r"/v2/team/a/blobs/.+")
        assert len(blob_requests) == 5  # one a blob: the first range; the rest asked of the CDN
        assert len(cdn.requests) == 6 + 1 + 3  # the large layer's 6 ranges, the small one, config and SBOM's blobs
        assert all("Authorization" not in request.headers for request in cdn.requests)
    for digest in (IMAGE.digest, SBOM.digest):
        data = served(target.url, "m/team/a", digest)
        assert data is not None and sha256(data) == digest
    listing = tags_of(target.url, "m/team/a")
    referrers = served(target.url, "m/team/a", listing[IMAGE.digest.replace(":", "-")])
    assert referrers is not None
    assert json.loads(referrers)["manifests"] == [{"mediaType": SBOM.media_type, "digest": SBOM.digest,
                                                   "size": len(SBOM.data), "artifactType": "application/spdx+json"}]
