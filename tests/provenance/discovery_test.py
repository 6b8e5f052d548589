"""Finding what refers to a locked image: the referrers API (served by the FAKE registry), the tag
schemes (against the real docker-registry 2.8, which has no referrers API), BuildKit attestation
manifests inside the index; and what each costs in requests, counted where they arrive."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.errors import DigestMismatch, RegistryError
from pinguard.provenance import discovery
from pinguard.provenance.discovery import SBOMS, Discovered, discover
from pinguard.provenance.evidence import (
    COSIGN_ATTESTATION,
    COSIGN_SIGNATURE,
    IN_TOTO,
    NOTATION_SIGNATURE,
    SIGSTORE_BUNDLE,
)
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.settings import RegistrySettings
from testing.attestations import (
    DSSE_ENVELOPE,
    JWS,
    SPDX_DOCUMENT,
    SPDX_JSON,
    Payload,
    attestation_manifest,
    attested_index,
    cosign_manifest,
    cosign_referrer,
    cosign_signature,
    cosign_tag,
    in_toto,
    notation_signature,
    referrer,
    referrers_index,
    referrers_tag,
    served,
    sigstore_bundle,
    statement,
)
from testing.fake_registry import (
    FakeRegistry,
    Request,
    Response,
    Route,
    digest,
    error_response,
    serve_manifests,
    serve_referrers,
)
from testing.images import Manifest, image, multi_platform, soci_index_for
from testing.proxy import LatencyProxy
from tests.conftest import SeededRegistry
from tests.registry.conftest import REGISTRY, settings_for

REPO = "team/trainer"
INDEX = multi_platform("signed")
AMD64, ARM64 = INDEX.children
SIGNED = cosign_signature(b'{"critical": {"image": "index"}}', "c2lnbmF0dXJl")
COSIGN_ON_INDEX = cosign_referrer(INDEX, [SIGNED])
NOTATION_ON_AMD64 = notation_signature(AMD64, b'{"payload": "x", "protected": "y", "signature": "z"}')
BUNDLE_ON_INDEX = sigstore_bundle(INDEX, b'{"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json"}')
SOCI_ON_AMD64 = soci_index_for(AMD64)  # a referrer of a kind not looked for: never fetched
SBOM_ON_ARM64 = referrer(ARM64, "application/spdx+json", [Payload("application/spdx+json", b'{"spdxVersion": "x"}')])
REFERRERS = (COSIGN_ON_INDEX, NOTATION_ON_AMD64, BUNDLE_ON_INDEX, SOCI_ON_AMD64, SBOM_ON_ARM64)


def kinds(requests: list[Request]) -> Counter[str]:
    """Requests by what they ask for: "referrers", "manifests", "blobs", "tags"."""
    return Counter(request.bare_path.split("/")[-2] if "/tags/" not in request.bare_path else "tags"
                   for request in requests)


def by_manifest(found: Discovered) -> dict[str, tuple[str, str, str]]:
    return {a.manifest_digest: (a.subject, a.artifact_type, a.found_by) for a in found.artifacts}


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    with FakeRegistry() as started:
        yield started


def open_client(fake: FakeRegistry, cache: Path) -> RegistryClient:
    return RegistryClient(settings_for(fake.url, cache.parent), RegistryCache(cache))


@pytest.fixture
def client(fake: FakeRegistry, tmp_path: Path) -> Iterator[RegistryClient]:
    with open_client(fake, tmp_path / "cache") as opened:
        yield opened


def serve(fake: FakeRegistry, tagged: dict[str, Manifest], referrers: tuple[Manifest, ...] = REFERRERS, *,
          page_size: int | None = None, filters: bool = True, link_base: str = "") -> None:
    manifests, blobs = served(tagged, referrers)
    fake.add(*serve_referrers(REPO, manifests, page_size=page_size, filters=filters, link_base=link_base),
             *serve_manifests(REPO, manifests, blobs=blobs))


# The client's referrers API.

def test_referrers_are_listed_once_a_run(fake: FakeRegistry, client: RegistryClient) -> None:
    serve(fake, {"v1": INDEX})
    listed = client.referrers(REGISTRY, REPO, INDEX.digest)
    assert listed is not None
    assert {entry.digest for entry in listed} == {COSIGN_ON_INDEX.digest, BUNDLE_ON_INDEX.digest}
    bundle = next(entry for entry in listed if entry.digest == BUNDLE_ON_INDEX.digest)
    assert bundle.artifact_type == SIGSTORE_BUNDLE
    assert bundle.annotations["dev.sigstore.bundle.content"] == "message-signature"
    assert client.referrers(REGISTRY, REPO, INDEX.digest) == listed
    assert [request.path for request in fake.requests] == [f"/v2/{REPO}/referrers/{INDEX.digest}"]
    assert fake.requests[0].headers["Accept"] == "application/vnd.oci.image.index.v1+json"


@pytest.mark.parametrize("filters", [True, False], ids=["filter-honoured", "filter-ignored"])
def test_artifact_type_filter(fake: FakeRegistry, client: RegistryClient, filters: bool) -> None:
    serve(fake, {"v1": INDEX}, filters=filters)
    listed = client.referrers(REGISTRY, REPO, INDEX.digest, artifact_type=SIGSTORE_BUNDLE)
    assert [entry.digest for entry in listed or []] == [BUNDLE_ON_INDEX.digest]
    (asked,) = fake.requests
    assert asked.query == {"artifactType": [SIGSTORE_BUNDLE]}  # "+" and "/" sent escaped, read back whole


@pytest.mark.parametrize("absolute", [False, True], ids=["relative-link", "absolute-link"])
def test_referrers_over_several_pages(fake: FakeRegistry, client: RegistryClient, absolute: bool) -> None:
    many = tuple(sigstore_bundle(INDEX, f'{{"n": {n}}}'.encode()) for n in range(5))
    serve(fake, {"v1": INDEX}, many, page_size=2, link_base=fake.url if absolute else "")
    listed = client.referrers(REGISTRY, REPO, INDEX.digest)
    assert [entry.digest for entry in listed or []] == [bundle.digest for bundle in many]
    assert [request.query.get("page") for request in fake.requests] == [None, ["1"], ["2"]]


def test_pages_that_loop_back_are_refused(fake: FakeRegistry, client: RegistryClient) -> None:
    path = f"/v2/{REPO}/referrers/{INDEX.digest}"
    body = json.dumps({"schemaVersion": 2, "manifests": []}).encode()
    fake.add(Route("GET", path, Response(200, {"Link": f'<{path}?page=1>; rel="next"'}, body)))
    with pytest.raises(RegistryError, match="referrer pages loop back to"):
        client.referrers(REGISTRY, REPO, INDEX.digest)
    assert len(fake.requests) == 2


@pytest.mark.parametrize("body", [
    b"not json",
    b'{"manifests": "none"}',
    json.dumps({"manifests": [{"mediaType": "x", "digest": "sha256:../../etc/passwd", "size": 1}]}).encode(),
    json.dumps({"manifests": [{"mediaType": "x", "digest": "sha256:" + "a" * 63, "size": 1}]}).encode(),
    json.dumps({"manifests": [{"mediaType": "x", "digest": digest(b"x"), "size": "big"}]}).encode(),
], ids=["not-json", "no-list", "path-in-digest", "short-digest", "bad-size"])
def test_malformed_referrers_are_a_clean_error(fake: FakeRegistry, client: RegistryClient, body: bytes) -> None:
    fake.add(Route("GET", f"/v2/{REPO}/referrers/.*", Response(200, {}, body)))
    with pytest.raises(RegistryError, match=f"the referrers of {INDEX.digest} are malformed"):
        client.referrers(REGISTRY, REPO, INDEX.digest)
    assert len(fake.requests) == 1  # nothing named by a bad digest was asked for


def test_a_malformed_subject_is_never_asked_about(fake: FakeRegistry, client: RegistryClient) -> None:
    with pytest.raises(RegistryError, match="is not a valid digest"):
        client.referrers(REGISTRY, REPO, "sha256:../../v2/_catalog")
    assert fake.requests == []


def test_no_referrers_api_is_learnt_once_a_run(fake: FakeRegistry, client: RegistryClient) -> None:
    """distribution 2.8 answers 404: the caller falls back to tags, and the registry is not asked again."""
    assert client.referrers(REGISTRY, REPO, INDEX.digest) is None
    assert client.referrers(REGISTRY, REPO, AMD64.digest) is None
    assert client.referrers(REGISTRY, "other/repository", ARM64.digest) is None
    assert len(fake.requests) == 1


def test_a_registry_with_the_api_that_answers_404_is_an_error(fake: FakeRegistry, client: RegistryClient) -> None:
    serve(fake, {"v1": INDEX})
    assert client.referrers(REGISTRY, REPO, INDEX.digest) is not None
    fake.routes.insert(0, Route("GET", f"/v2/{REPO}/referrers/.*", error_response(404, "NOT_FOUND")))
    with pytest.raises(RegistryError, match=f"referrers of {AMD64.digest} not found"):
        client.referrers(REGISTRY, REPO, AMD64.digest)


# Discovery through the referrers API.

def test_discovery_through_the_referrers_api(fake: FakeRegistry, tmp_path: Path) -> None:
    serve(fake, {"v1": INDEX})
    with open_client(fake, tmp_path / "cache") as client:
        client.manifest_for_tag(REGISTRY, REPO, "v1")  # resolved first, as `lock` does
        resolved = len(fake.requests)
        found = discover(client, REGISTRY, REPO, INDEX.digest, [AMD64.digest, ARM64.digest])
        assert by_manifest(found) == {
            COSIGN_ON_INDEX.digest: (INDEX.digest, COSIGN_SIGNATURE, "referrers"),  # cosign's own type gives way
            BUNDLE_ON_INDEX.digest: (INDEX.digest, SIGSTORE_BUNDLE, "referrers"),
            NOTATION_ON_AMD64.digest: (AMD64.digest, NOTATION_SIGNATURE, "referrers"),
            SBOM_ON_ARM64.digest: (ARM64.digest, "application/spdx+json", "referrers"),
        }
        assert found.notes == ()
        cosign = next(a for a in found.artifacts if a.manifest_digest == COSIGN_ON_INDEX.digest)
        assert [(layer.media_type, layer.data, layer.annotations) for layer in cosign.layers] == [
            (SIGNED.media_type, SIGNED.data, dict(SIGNED.annotations))]
        notation = next(a for a in found.artifacts if a.manifest_digest == NOTATION_ON_AMD64.digest)
        assert notation.layers[0].media_type == JWS
        assert "io.cncf.notary.x509chain.thumbprint#S256" in notation.annotations
        # A referrers request a subject, a manifest and a blob a referrer; the SOCI index never fetched.
        assert kinds(fake.requests[resolved:]) == {"referrers": 3, "manifests": 4, "blobs": 4}
        assert not any(SOCI_ON_AMD64.digest in request.path for request in fake.requests)
        cold = len(fake.requests)
        assert discover(client, REGISTRY, REPO, INDEX.digest, [AMD64.digest, ARM64.digest]) == found
        assert len(fake.requests) == cold  # nothing asked twice in a run
    with open_client(fake, tmp_path / "cache") as client:  # warm: content from the cache
        assert discover(client, REGISTRY, REPO, INDEX.digest, [AMD64.digest, ARM64.digest]) == found
    assert kinds(fake.requests[cold:]) == {"referrers": 3}


def test_only_wanted_kinds_are_fetched(fake: FakeRegistry, client: RegistryClient) -> None:
    serve(fake, {"v1": INDEX})
    found = discover(client, REGISTRY, REPO, INDEX.digest, [AMD64.digest, ARM64.digest], {SBOMS})
    assert by_manifest(found) == {SBOM_ON_ARM64.digest: (ARM64.digest, "application/spdx+json", "referrers")}
    assert kinds(fake.requests) == {"referrers": 3, "manifests": 1, "blobs": 1}  # no index: attestations not wanted


def test_unknown_kinds_are_a_programming_error(client: RegistryClient) -> None:
    with pytest.raises(ValueError, match="unknown kinds"):
        discover(client, REGISTRY, REPO, INDEX.digest, [], {"provenance"})


def test_a_single_manifest_is_one_subject(fake: FakeRegistry, client: RegistryClient) -> None:
    single = image(seed="single")
    signature = cosign_referrer(single, [SIGNED])
    serve(fake, {"v1": single}, (signature,))
    found = discover(client, REGISTRY, REPO, single.digest, [single.digest])
    assert by_manifest(found) == {signature.digest: (single.digest, COSIGN_SIGNATURE, "referrers")}
    assert kinds(fake.requests) == {"referrers": 1, "manifests": 1, "blobs": 1}


def test_layers_over_the_limit_are_not_fetched(fake: FakeRegistry, client: RegistryClient) -> None:
    big = Payload(SPDX_JSON, b"x" * 2048)
    small = Payload(SPDX_JSON, b"{}")
    sbom = referrer(INDEX, "application/vnd.dev.cosign.artifact.sbom.v1+json", [big, small])
    serve(fake, {"v1": INDEX}, (sbom,))
    found = discover(client, REGISTRY, REPO, INDEX.digest, [], max_layer_bytes=1024)
    (artifact,) = found.artifacts
    assert artifact.artifact_type == SPDX_JSON
    assert [layer.data for layer in artifact.layers] == [b"{}"]
    assert found.notes == (f"{INDEX.digest}: layer {big.blob.digest} of referrer {sbom.digest} is 2048 bytes, "
                           "over the 1024-byte limit: not fetched",)
    assert not fake.requests_to(f"/v2/{REPO}/blobs/{big.blob.digest}")


def test_hostile_or_stale_referrers_are_skipped_with_a_note(fake: FakeRegistry, client: RegistryClient) -> None:
    elsewhere = cosign_referrer(image(seed="elsewhere"), [SIGNED])  # listed under INDEX, refers to another image
    gone = sigstore_bundle(INDEX, b'{"gone": true}')  # listed, but no longer served
    listing = referrers_index([elsewhere, gone]).document
    listing["manifests"].append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest(b"[]"),
                                 "size": 2, "artifactType": SIGSTORE_BUNDLE})
    manifests, blobs = served({"v1": INDEX}, [elsewhere])
    manifests[digest(b"[]")] = ("application/vnd.oci.image.manifest.v1+json", b"[]")
    fake.add(Route("GET", f"/v2/{REPO}/referrers/{INDEX.digest}", Response(200, {}, json.dumps(listing).encode())),
             *serve_manifests(REPO, manifests, blobs=blobs))
    found = discover(client, REGISTRY, REPO, INDEX.digest, [])
    assert found.artifacts == ()
    assert found.notes == (
        f"{INDEX.digest}: referrer {elsewhere.digest} (referrers) refers to {elsewhere.document['subject']['digest']}:"
        " skipped",
        f"{INDEX.digest}: referrer {gone.digest} (referrers) is listed but not served: skipped",
        f"{INDEX.digest}: referrer {digest(b'[]')} (referrers) manifest {digest(b'[]')} is not a JSON object: skipped",
    )


def test_referrers_beyond_the_limit_are_not_read(fake: FakeRegistry, client: RegistryClient,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discovery, "MAX_REFERRERS", 2)
    many = tuple(sigstore_bundle(INDEX, f'{{"n": {n}}}'.encode()) for n in range(3))
    serve(fake, {"v1": INDEX}, many)
    found = discover(client, REGISTRY, REPO, INDEX.digest, [])
    assert [artifact.manifest_digest for artifact in found.artifacts] == [bundle.digest for bundle in many[:2]]
    assert found.notes == (f"{INDEX.digest}: 3 referrers (referrers); only the first 2 read",)
    assert not fake.requests_to(f"/v2/{REPO}/manifests/{many[2].digest}")


@pytest.mark.parametrize(("held", "said"), [
    (image(seed="not an index").data, "holds no index of referrers: not read"),
    (json.dumps({"mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [{"digest": "sha256:.."}]})
     .encode(), "holds a malformed index of referrers (index sha256:"),
], ids=["not-an-index", "malformed-index"])
def test_a_referrers_tag_that_holds_no_usable_index_is_noted(fake: FakeRegistry, client: RegistryClient,
                                                            held: bytes, said: str) -> None:
    single = image(seed="single")
    manifests, blobs = served({"v1": single})
    manifests[referrers_tag(single.digest)] = ("application/vnd.oci.image.index.v1+json", held)
    fake.add(*serve_manifests(REPO, manifests, blobs=blobs))
    found = discover(client, REGISTRY, REPO, single.digest, [single.digest])
    assert found.artifacts == ()
    (note,) = found.notes
    assert note.startswith(f"{single.digest}: tag {referrers_tag(single.digest)} {said}")


def test_a_layer_served_tampered_fails_loudly(fake: FakeRegistry, client: RegistryClient) -> None:
    signature = cosign_referrer(INDEX, [SIGNED])
    manifests, _ = served({"v1": INDEX}, [signature])
    fake.add(*serve_referrers(REPO, manifests),
             *serve_manifests(REPO, manifests, blobs={SIGNED.blob.digest: SIGNED.data + b" "}))
    with pytest.raises(DigestMismatch, match=f"blob {SIGNED.blob.digest} was served as bytes hashing to"):
        discover(client, REGISTRY, REPO, INDEX.digest, [])


# BuildKit attestation manifests inside the index.

PROVENANCE_AMD64 = in_toto(statement("sha256:" + "1" * 64))  # statement bytes are inputs: the subject need not match
SBOM_AMD64 = in_toto(statement("sha256:" + "1" * 64, SPDX_DOCUMENT), SPDX_DOCUMENT)
PROVENANCE_ARM64 = in_toto(statement("sha256:" + "2" * 64))
ATTESTED = attested_index([(AMD64, [PROVENANCE_AMD64, SBOM_AMD64]), (ARM64, [PROVENANCE_ARM64])])


def test_attestation_manifests_inside_the_index(fake: FakeRegistry, client: RegistryClient) -> None:
    manifests, blobs = served({"v1": ATTESTED})
    fake.add(*serve_manifests(REPO, manifests, blobs=blobs))  # no referrers API, no tags of cosign's scheme
    client.manifest_for_tag(REGISTRY, REPO, "v1")
    resolved = len(fake.requests)
    found = discover(client, REGISTRY, REPO, ATTESTED.digest, [AMD64.digest])  # only amd64 is locked
    (attestation,) = found.artifacts
    assert (attestation.subject, attestation.artifact_type, attestation.found_by) == (AMD64.digest, IN_TOTO, "index")
    assert [(layer.data, layer.annotations["in-toto.io/predicate-type"]) for layer in attestation.layers] == [
        (PROVENANCE_AMD64.data, "https://slsa.dev/provenance/v0.2"), (SBOM_AMD64.data, SPDX_DOCUMENT)]
    # The index came from the run's cache; the arm64 attestation is not fetched.
    assert kinds(fake.requests[resolved:]) == {"referrers": 1, "tags": 1, "manifests": 1, "blobs": 2}


def test_attestations_for_unlocked_or_malformed_digests_are_ignored(fake: FakeRegistry,
                                                                    client: RegistryClient) -> None:
    entries = json.loads(ATTESTED.data)
    for entry in entries["manifests"]:
        if entry.get("annotations", {}).get("vnd.docker.reference.digest") == AMD64.digest:
            entry["annotations"]["vnd.docker.reference.digest"] = "sha256:../../../etc"
    hostile = json.dumps(entries).encode()
    fake.add(*serve_manifests(REPO, {"v1": (ATTESTED.media_type, hostile)}))
    found = discover(client, REGISTRY, REPO, digest(hostile), [AMD64.digest])
    assert found == Discovered((), ())


# The tag schemes, against the real docker-registry 2.8 (no referrers API).

TAGGED_REPO = "provenance/tagged"
ATTESTATION_ON_AMD64 = cosign_manifest([Payload(DSSE_ENVELOPE, b'{"payloadType": "application/vnd.in-toto+json"}',
                                                {"predicateType": "https://slsa.dev/provenance/v1"})])
SIGNATURE_ON_INDEX = cosign_manifest([SIGNED])
NOTATION_ON_ATTESTED = notation_signature(ATTESTED, b'{"signature": "on the index"}')


@pytest.mark.registry
def test_tag_fallback_against_docker_registry(token_registry: SeededRegistry, tmp_path: Path) -> None:
    running = token_registry.registry
    pusher = running.pusher()
    pusher.push(TAGGED_REPO, ATTESTED, "v1")
    pusher.push(TAGGED_REPO, SIGNATURE_ON_INDEX, cosign_tag(ATTESTED.digest, ".sig"))
    pusher.push(TAGGED_REPO, ATTESTATION_ON_AMD64, cosign_tag(AMD64.digest, ".att"))
    pusher.push(TAGGED_REPO, referrers_index([NOTATION_ON_ATTESTED]), referrers_tag(ATTESTED.digest))
    assert running.token_server is not None
    with LatencyProxy(running.url, delay=0, ca_file=running.ca_file, token_url=running.token_server.url) as proxy:
        settings = RegistrySettings(mirrors={REGISTRY: proxy.url}, env={"HOME": str(tmp_path)},
                                    rates={REGISTRY: 1000.0})

        def run() -> tuple[Discovered, list[str]]:
            """Discovery after resolving `v1`, and the requests it made (tokens and `v1` left out)."""
            with RegistryClient(settings, RegistryCache(tmp_path / "cache")) as client:
                body = client.manifest_for_tag(REGISTRY, TAGGED_REPO, "v1")
                proxy.reset()
                found = discover(client, REGISTRY, TAGGED_REPO, body.digest, [AMD64.digest, ARM64.digest])
            return found, [f"{a.method} {a.path}" for a in proxy.arrivals if a.kind != "token"]

        cold, cold_requests = run()
        warm, warm_requests = run()
    assert by_manifest(cold) == {
        NOTATION_ON_ATTESTED.digest: (ATTESTED.digest, NOTATION_SIGNATURE, "tag"),
        SIGNATURE_ON_INDEX.digest: (ATTESTED.digest, COSIGN_SIGNATURE, "tag"),
        ATTESTATION_ON_AMD64.digest: (AMD64.digest, COSIGN_ATTESTATION, "tag"),
        attestation_manifest([PROVENANCE_AMD64, SBOM_AMD64]).digest: (AMD64.digest, IN_TOTO, "index"),
        attestation_manifest([PROVENANCE_ARM64]).digest: (ARM64.digest, IN_TOTO, "index"),
    }
    assert cold.notes == ()
    assert warm == cold
    base = f"/v2/{TAGGED_REPO}"
    found_tags = [referrers_tag(ATTESTED.digest), cosign_tag(ATTESTED.digest, ".sig"), cosign_tag(AMD64.digest, ".att")]
    # One referrers 404 for the registry, one tag list; only tags that exist are asked for.
    assert [r for r in cold_requests if "/manifests/sha256-" in r or "/referrers/" in r or "/tags/" in r] == [
        f"GET {base}/referrers/{ATTESTED.digest}", f"GET {base}/tags/list",
        f"GET {base}/manifests/{found_tags[0]}", f"GET {base}/manifests/{found_tags[1]}",
        f"GET {base}/manifests/{found_tags[2]}",
    ]
    # Warm: the same, with a HEAD per tag found; every manifest and layer from the cache.
    assert warm_requests == [
        f"GET {base}/referrers/{ATTESTED.digest}", f"GET {base}/tags/list",
        *(f"HEAD {base}/manifests/{tag}" for tag in found_tags),
    ]
