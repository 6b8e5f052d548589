"""The judge of what a target serves (`pinguard.copy.proof`) against a FAKE registry: manifests hashed, tags
looked up, blob HEADs held to the rule, and, deep, blobs hashed a byte range at a time."""
from __future__ import annotations

import io
import re
from pathlib import Path

from pinguard.cli import main
from pinguard.copy.plan import Blob
from pinguard.copy.proof import Proof, blob_hash_problem
from pinguard.registry.manifest import OCI_MANIFEST
from pinguard.registry.transport import Transport
from pinguard.registry.upload import Uploader
from testing.fake_registry import (
    Action,
    FakeRegistry,
    Request,
    Response,
    Route,
    digest,
    error_response,
    manifest_response,
)
from tests.copy.conftest import TARGET

BYTES = b"0123456789"
BLOB = Blob(digest(BYTES), len(BYTES))




def ranges_of(data: bytes) -> Route:
    """A blob served a byte range at a time, as registries serve them."""
    def answer(request: Request) -> Action:
        asked = re.fullmatch(r"bytes=(\d+)-(\d+)", request.headers.get("Range", ""))
        if asked is None:
            return Response(200, {}, data)
        start, end = int(asked[1]), int(asked[2])
        return Response(206, {"Content-Range": f"bytes {start}-{end}/{len(data)}"}, data[start:end + 1])
    return Route("GET", f"/v2/team/a/blobs/{BLOB.digest}", answer)


def test_a_blob_is_read_a_range_at_a_time_and_hashed(fake: FakeRegistry, transport: Transport) -> None:
    fake.routes.append(ranges_of(BYTES))
    assert blob_hash_problem(transport, "team/a", BLOB, "the image", chunk=4) is None
    assert [r.headers["Range"] for r in fake.requests] == ["bytes=0-3", "bytes=4-7", "bytes=8-9"]  # never whole


def test_other_bytes_under_a_blobs_digest_are_a_problem_naming_it(fake: FakeRegistry, transport: Transport) -> None:
    fake.routes.append(ranges_of(b"9876543210"))
    assert blob_hash_problem(transport, "team/a", BLOB, "the image x", chunk=4) == (
        f"blob {BLOB.digest} of the image x is served as bytes hashing to {digest(b'9876543210')}")


def test_a_blob_sent_whole_where_a_range_was_asked_is_not_proven(fake: FakeRegistry, transport: Transport) -> None:
    fake.routes.append(Route("GET", f"/v2/team/a/blobs/{BLOB.digest}", Response(200, {}, BYTES)))
    problem = blob_hash_problem(transport, "team/a", BLOB, "the image", chunk=4)
    assert problem is not None and problem.startswith(f"blob {BLOB.digest} of the image could not be read whole: ")
    assert "serve byte ranges" in problem


def test_manifests_tags_and_blobs_each_a_problem_of_their_own(fake: FakeRegistry, transport: Transport) -> None:
    data = b'{"schemaVersion":2}'
    served, gone = digest(data), "sha256:" + "0" * 64
    lying = "sha256:" + "1" * 64
    fake.routes += [
        Route("*", f"/v2/team/a/manifests/{served}", manifest_response(OCI_MANIFEST, data)),
        Route("*", "/v2/team/a/manifests/v1", manifest_response(OCI_MANIFEST, data)),
        Route("GET", f"/v2/team/a/manifests/{lying}", manifest_response(OCI_MANIFEST, data)),
        Route("HEAD", f"/v2/team/a/blobs/{BLOB.digest}", Response(200, {"Transfer-Encoding": "chunked"})),
        Route("*", "/v2/team/a/manifests/.*", error_response(404, "MANIFEST_UNKNOWN")),
    ]
    proof = Proof(Uploader(transport, push=False), "team/a")
    assert proof.manifest(served, "manifest") is not None
    assert proof.manifest(gone, "manifest") is None
    assert proof.manifest(lying, "manifest") is None
    proof.tag("v1", served)
    proof.tag("v1", gone)
    proof.tag("v2", served)
    assert proof.blob(BLOB, f"manifest {served}") is False
    assert proof.problems == [
        f"manifest {gone} is not served",
        f"manifest {lying}: {TARGET}/team/a: manifest {lying} was served as bytes hashing to {served}",
        f"tag v1 names {served}, not {gone}",
        "tag v2 is gone",
        f"blob {BLOB.digest} of manifest {served} is not proven: HEAD answered 200 without Content-Length or "
        "Docker-Content-Digest",
    ]


def test_deep_without_copies_is_refused_saying_so(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    status = main(["verify", "--deep", "--lockfile", str(tmp_path / "pinguard.lock")],
                  env={"HOME": str(tmp_path)}, stdout=out, stderr=err)
    assert status == 2
    assert "--deep hashes the blobs of the copies the lock records: give it with --copies" in err.getvalue()
    assert "Traceback" not in err.getvalue()
