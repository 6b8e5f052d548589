"""The push API (`pinguard.registry.upload`) against a FAKE registry that answers as registries do when
things go their own way: a mount refused, a commit retried, a range held short, a digest stored otherwise."""
from __future__ import annotations

import pytest

from pinguard.errors import DigestMismatch, RegistryError
from pinguard.registry.manifest import OCI_MANIFEST, ManifestBody, sha256_digest
from pinguard.registry.transport import Transport
from pinguard.registry.upload import Upload, Uploader
from testing.fake_registry import FakeRegistry, Response, Route, error_response

DIGEST = "sha256:" + "d" * 64


@pytest.fixture
def uploader(transport: Transport) -> Uploader:
    return Uploader(transport)


def started(location: str = "/v2/team/a/blobs/uploads/u1?_state=s", **headers: str) -> Response:
    return Response(202, {"Location": location, "Range": "0-0", **headers})


def test_a_mount_the_registry_declines_starts_the_upload_it_offers(fake: FakeRegistry, uploader: Uploader) -> None:
    fake.routes.append(Route("POST", "/v2/team/a/blobs/uploads/", started(**{"OCI-Chunk-Min-Length": "5242880"})))
    upload = uploader.mount("team/a", DIGEST, "team/b")
    assert upload == Upload(f"{fake.url}/v2/team/a/blobs/uploads/u1?_state=s", 0, 5 << 20)
    (asked,) = fake.requests
    assert asked.query == {"mount": [DIGEST], "from": ["team/b"]}


def test_a_mount_is_a_201_naming_the_digest(fake: FakeRegistry, uploader: Uploader) -> None:
    fake.routes.append(Route("POST", "/v2/team/a/blobs/uploads/", Response(201, {"Docker-Content-Digest": DIGEST})))
    assert uploader.mount("team/a", DIGEST, "team/b") is None
    fake.routes[:] = [Route("POST", "/v2/team/a/blobs/uploads/", Response(201, {"Docker-Content-Digest": "sha256:"
                                                                                  + "e" * 64}))]
    with pytest.raises(DigestMismatch, match="the mounted blob"):
        uploader.mount("team/a", DIGEST, "team/b")


def test_chunks_go_at_their_offset_and_a_registry_holding_less_is_an_error(fake: FakeRegistry,
                                                                          uploader: Uploader) -> None:
    fake.routes.append(Route("PATCH", "/v2/team/a/blobs/uploads/u1", [
        started("/v2/team/a/blobs/uploads/u1?_state=t", Range="0-3"),
        started("/v2/team/a/blobs/uploads/u1?_state=v", Range="0-5"),
    ]))
    upload = uploader.append("team/a", Upload(f"{fake.url}/v2/team/a/blobs/uploads/u1?_state=s"), b"abcd")
    assert (upload.url, upload.offset) == (f"{fake.url}/v2/team/a/blobs/uploads/u1?_state=t", 4)
    assert fake.requests[0].headers["Content-Range"] == "0-3"
    with pytest.raises(RegistryError, match="the upload holds '0-5' after bytes 0-7 were sent"):
        uploader.append("team/a", upload, b"efgh")


def test_a_commit_that_finds_no_upload_stands_when_the_blob_is_there(fake: FakeRegistry, uploader: Uploader) -> None:
    """A PUT retried after the registry committed the first finds the upload gone: the blob is what counts."""
    fake.routes += [
        Route("PUT", "/v2/team/a/blobs/uploads/u1", error_response(404, "BLOB_UPLOAD_UNKNOWN")),
        Route("HEAD", f"/v2/team/a/blobs/{DIGEST}", [Response(200, {"Content-Length": "4"}), Response(404)]),
    ]
    upload = Upload(f"{fake.url}/v2/team/a/blobs/uploads/u1?_state=s")
    uploader.finish("team/a", upload, DIGEST, 4, b"abcd")
    assert fake.requests[0].query == {"_state": ["s"], "digest": [DIGEST]}
    with pytest.raises(RegistryError, match=r"commit blob .*answered 404"):
        uploader.finish("team/a", upload, DIGEST, 4, b"abcd")


OTHER = "sha256:" + "e" * 64
UNSIZED = {"Transfer-Encoding": "chunked"}  # a HEAD answered without Content-Length


@pytest.mark.parametrize(("answer", "absence"), [
    (Response(200, {"Docker-Content-Digest": DIGEST, "Content-Length": "4"}), None),
    (Response(200, {"Docker-Content-Digest": DIGEST, **UNSIZED}), None),
    (Response(200, {"Content-Length": "4"}), None),
    (Response(200, UNSIZED), "HEAD answered 200 without Content-Length or Docker-Content-Digest"),
    (Response(200, {"Content-Length": "5"}), "HEAD answered 200 with Content-Length 5, where its manifest says 4"),
    (Response(200, {"Docker-Content-Digest": DIGEST, "Content-Length": "0"}),
     "HEAD answered 200 with Content-Length 0, where its manifest says 4"),
    (Response(200, {"Docker-Content-Digest": OTHER, "Content-Length": "4"}), f"HEAD answered 200 naming {OTHER}"),
    (error_response(404, "BLOB_UNKNOWN"), "HEAD answered 404"),
])
def test_a_blob_counts_only_where_its_head_names_its_digest_or_its_size(
        fake: FakeRegistry, uploader: Uploader, answer: Response, absence: str | None) -> None:
    fake.routes.append(Route("HEAD", f"/v2/team/a/blobs/{DIGEST}", answer))
    assert uploader.blob_absence("team/a", DIGEST, 4) == absence
    assert uploader.has_blob("team/a", DIGEST, 4) is (absence is None)


@pytest.mark.parametrize(("status", "said"), [(403, r"access denied \(403\)"), (500, "500 Internal Server Error")])
def test_a_blob_head_refused_or_failing_is_an_error_not_an_absence(fake: FakeRegistry, uploader: Uploader,
                                                                   status: int, said: str) -> None:
    fake.routes.append(Route("HEAD", f"/v2/team/a/blobs/{DIGEST}", Response(status)))
    with pytest.raises(RegistryError, match=said):
        uploader.has_blob("team/a", DIGEST, 4)


def test_a_manifest_stored_under_another_digest_is_an_error(fake: FakeRegistry, uploader: Uploader) -> None:
    data = b'{"schemaVersion":2}'
    body = ManifestBody(data, sha256_digest(data), OCI_MANIFEST)
    fake.routes.append(Route("PUT", "/v2/team/a/manifests/v1", [
        Response(201, {"Docker-Content-Digest": body.digest, "OCI-Subject": body.digest}),
        Response(201, {"Docker-Content-Digest": DIGEST}),
    ]))
    assert uploader.put_manifest("team/a", "v1", body) is True  # the registry read its subject
    assert (fake.requests[0].body, fake.requests[0].headers["Content-Type"]) == (data, OCI_MANIFEST)
    with pytest.raises(DigestMismatch, match=f"stored as {DIGEST}"):
        uploader.put_manifest("team/a", "v1", body)


def test_refused_pushes_say_who_was_refused(fake: FakeRegistry, uploader: Uploader) -> None:
    fake.routes.append(Route("POST", "/v2/team/a/blobs/uploads/", Response(403)))
    with pytest.raises(RegistryError, match=r"start an upload: access denied \(403\) to anonymous; pushing needs"):
        uploader.start("team/a")
