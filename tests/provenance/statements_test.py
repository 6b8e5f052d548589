from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pinguard.provenance import statements
from pinguard.provenance.evidence import (
    COSIGN_ATTESTATION,
    CYCLONEDX,
    IN_TOTO,
    SLSA_V02,
    SLSA_V1,
    SPDX,
    Build,
    Layer,
    Sbom,
)
from pinguard.provenance.statements import Statements, read
from pinguard.provenance.trust import Trust
from testing import signing

IMAGE = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64
BUILDKIT_INDEX = "application/vnd.oci.image.manifest.v1+json"


def _read(*layers: Layer, trust: Trust | None = None, subject: str = IMAGE) -> Statements:
    return read(signing.artifact(subject, BUILDKIT_INDEX, *layers, found_by="index"), subject, trust or Trust())


def _provenance(predicate_type: str, predicate: object, *, subjects: tuple[str, ...] = (IMAGE,),
                version: str = "v1") -> Layer:
    return signing.in_toto_layer(signing.statement(subjects, predicate_type, predicate, version=version),
                                 predicate_type)


def _build(layer: Layer, **fields: object) -> Build:
    values: dict[str, object] = {
        "builder": None, "source": None, "revision": None, "started": None, "finished": None,
        "statement_digest": layer.digest, "subject": IMAGE, "subject_matches": True, "signed": False,
    }
    return Build(**(values | fields))  # type: ignore[arg-type]


# --- SLSA provenance --------------------------------------------------------------------------------


def test_buildkit_v02_provenance_from_a_git_context():
    layer = _provenance(SLSA_V02, signing.slsa_v02_buildkit(), version="v0.1")
    assert _read(layer) == Statements(builds=(_build(
        layer, predicate_type=SLSA_V02, builder="https://github.com/acme/trainer/actions/runs/3709599520",
        source="https://github.com/acme/trainer.git", revision="4b220de5058abfd01ff619c9d2ff6b09a049bea0",
        started="2025-05-30T10:00:00Z", finished="2025-05-30T10:07:30Z"),))


def test_buildkit_v02_provenance_from_a_local_context_takes_the_vcs_hints():
    vcs = {"source": "https://github.com/acme/trainer", "revision": "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d"}
    [build] = _read(_provenance(SLSA_V02, signing.slsa_v02_buildkit(uri=None, vcs=vcs))).builds
    assert (build.source, build.revision) == (vcs["source"], vcs["revision"])


def test_a_local_context_without_hints_names_no_source():
    [build] = _read(_provenance(SLSA_V02, signing.slsa_v02_buildkit(uri=None))).builds
    assert (build.source, build.revision, build.builder) == (None, None,
                                                            "https://github.com/acme/trainer/actions/runs/3709599520")


def test_github_actions_v1_provenance():
    layer = _provenance(SLSA_V1, signing.slsa_v1_github())
    assert _read(layer) == Statements(builds=(_build(
        layer, predicate_type=SLSA_V1, builder="https://github.com/actions/runner/github-hosted",
        source="https://github.com/acme/trainer", revision="7fd1a60b01f91b314f59955a4e4d4e80d8edf11d"),))


def test_github_actions_v1_without_dependencies_names_the_workflow_repository():
    predicate = signing.slsa_v1_github()
    del predicate["buildDefinition"]["resolvedDependencies"]
    [build] = _read(_provenance(SLSA_V1, predicate)).builds
    assert (build.source, build.revision) == ("https://github.com/acme/trainer", None)


def test_buildkit_v1_provenance_from_a_git_context():
    config = {"uri": "https://github.com/acme/trainer.git#refs/tags/v1.2.0", "digest": {"sha1": "4b22" * 10},
              "path": "Dockerfile"}
    layer = _provenance(SLSA_V1, signing.slsa_v1_buildkit(config_source=config))
    assert _read(layer) == Statements(builds=(_build(
        layer, predicate_type=SLSA_V1, builder="https://github.com/acme/trainer/actions/runs/3709599520",
        source="https://github.com/acme/trainer.git", revision="4b22" * 10,
        started="2025-05-30T10:00:00Z", finished="2025-05-30T10:07:30Z"),))


def test_buildkit_v1_provenance_from_a_local_context_takes_the_vcs_hints():
    vcs = {"source": "git@github.com:acme/trainer.git", "revision": "7fd1a60b"}
    [build] = _read(_provenance(SLSA_V1, signing.slsa_v1_buildkit(vcs=vcs))).builds
    assert (build.source, build.revision) == ("git@github.com:acme/trainer.git", "7fd1a60b")


@pytest.mark.parametrize(("uri", "repository"), [
    ("git+https://github.com/acme/trainer@refs/heads/main", "https://github.com/acme/trainer"),
    ("https://github.com/acme/trainer.git#refs/tags/v1", "https://github.com/acme/trainer.git"),
    ("git+ssh://git@github.com/acme/trainer@v1", "ssh://git@github.com/acme/trainer"),
    ("https://gitlab.example/group/sub/repo", "https://gitlab.example/group/sub/repo"),
])
def test_a_source_is_named_by_its_repository(uri, repository):
    config = {"uri": uri, "digest": {"sha1": "4b22" * 10}}
    [build] = _read(_provenance(SLSA_V1, signing.slsa_v1_buildkit(config_source=config))).builds
    assert build.source == repository


def test_a_statement_about_another_manifest_says_so():
    [build] = _read(_provenance(SLSA_V02, signing.slsa_v02_buildkit(), subjects=(OTHER,))).builds
    assert (build.subject, build.subject_matches) == (OTHER, False)


def test_any_subject_may_name_the_manifest():
    [build] = _read(_provenance(SLSA_V02, signing.slsa_v02_buildkit(), subjects=(OTHER, IMAGE))).builds
    assert (build.subject, build.subject_matches) == (IMAGE, True)


@pytest.mark.parametrize("value", [42, "", "line\nbreak", "\x1b[31mred", "x" * 5000, ["list"]])
def test_text_that_is_not_short_printable_text_is_not_kept(value):
    predicate = signing.slsa_v02_buildkit()
    predicate["builder"]["id"] = value
    predicate["invocation"]["configSource"]["uri"] = value
    [build] = _read(_provenance(SLSA_V02, predicate)).builds
    assert (build.builder, build.source) == (None, None)


def test_other_predicate_types_are_ignored():
    layer = _provenance("https://cosign.sigstore.dev/attestation/vuln/v1", {"scanner": {}})
    assert _read(layer) == Statements()


# --- DSSE -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def key() -> signing.SigningKey:
    return signing.new_key("ecdsa")


def _trust(tmp_path: Path, key: signing.SigningKey) -> Trust:
    return Trust(keys=(signing.write_public_key(key, tmp_path / "cosign.pub"),))


def _attestation(key: signing.SigningKey, *, subjects: tuple[str, ...] = (IMAGE,), **options: bool) -> Layer:
    data = signing.statement(subjects, SLSA_V02, signing.slsa_v02_buildkit())
    return signing.dsse_layer(signing.dsse(data, key, **options), SLSA_V02)


def test_a_dsse_attestation_signed_by_a_trusted_key_is_signed(tmp_path, key):
    layer = _attestation(key)
    [build] = _read(layer, trust=_trust(tmp_path, key)).builds
    assert (build.signed, build.statement_digest, build.source) == (True, layer.digest,
                                                                     "https://github.com/acme/trainer.git")


def test_a_dsse_attestation_in_url_safe_base64_reads_the_same(tmp_path, key):
    [build] = _read(_attestation(key, url_safe=True), trust=_trust(tmp_path, key)).builds
    assert build.signed


def test_a_dsse_attestation_by_an_untrusted_key_is_read_as_failed_not_unsigned(tmp_path, key):
    [build] = _read(_attestation(key), trust=_trust(tmp_path, signing.new_key("ed25519"))).builds
    assert (build.signed, build.source) == (False, "https://github.com/acme/trainer.git")
    assert (build.failed, build.problem) == (True, "none of the 1 trusted cosign keys verifies its signature")
    [unkeyed] = _read(_attestation(key)).builds
    assert (unkeyed.signed, unkeyed.problem) == (False, "no cosign key was given to verify its signature with")


def test_raw_statements_and_envelopes_without_signatures_are_unsigned_not_failed(tmp_path, key):
    raw = _provenance(SLSA_V02, signing.slsa_v02_buildkit())
    bare = signing.dsse_layer(signing.dsse(signing.statement((IMAGE,), SLSA_V02, {})), SLSA_V02)
    for build in _read(raw, bare, trust=_trust(tmp_path, key)).builds:
        assert (build.signed, build.failed) == (False, False)


def test_a_tampered_dsse_attestation_is_not_signed(tmp_path, key):
    envelope = json.loads(signing.dsse(signing.statement((OTHER,), SLSA_V02, {}), key))
    envelope["payload"] = json.loads(signing.dsse(signing.statement((IMAGE,), SLSA_V02, {})))["payload"]
    [build] = _read(signing.dsse_layer(json.dumps(envelope).encode(), SLSA_V02), trust=_trust(tmp_path, key)).builds
    assert (build.signed, build.failed, build.subject_matches) == (False, True, True)


def test_a_signed_statement_about_another_image_is_signed_but_does_not_match(tmp_path, key):
    [build] = _read(_attestation(key, subjects=(OTHER,)), trust=_trust(tmp_path, key)).builds
    assert (build.signed, build.subject, build.subject_matches) == (True, OTHER, False)


def test_a_dsse_envelope_of_something_else_is_a_problem(key):
    layer = signing.dsse_layer(signing.dsse(b"{}", key, payload_type="text/plain"), SLSA_V02)
    assert _read(layer).problems == (f"{layer.digest}: the DSSE envelope does not hold an in-toto statement",)


# --- SBOMs ------------------------------------------------------------------------------------------


def test_spdx_statement_counts_packages():
    layer = _provenance(SPDX, signing.spdx_document(packages=3), version="v0.1")
    assert _read(layer) == Statements(sboms=(Sbom(SPDX, layer.digest, 3, IMAGE),))


def test_a_versioned_spdx_predicate_type_is_spdx():
    layer = _provenance(SPDX + "/v2.3", signing.spdx_document(packages=2))
    assert _read(layer).sboms == (Sbom(SPDX, layer.digest, 2, IMAGE),)


def test_cyclonedx_statement_counts_nested_components():
    bom = signing.cyclonedx_bom(signing.component("torch", signing.component("nvidia-cudnn"),
                                                  signing.component("triton", signing.component("llvm"))),
                                signing.component("numpy"))
    layer = _provenance(CYCLONEDX, bom)
    assert _read(layer).sboms == (Sbom(CYCLONEDX, layer.digest, 5, IMAGE),)


def test_an_sbom_about_another_image_is_a_problem_not_an_sbom():
    layer = _provenance(SPDX, signing.spdx_document(packages=3), subjects=(OTHER,))
    assert _read(layer) == Statements(problems=(f"{layer.digest}: an SBOM about {OTHER}, not this image",))


@pytest.mark.parametrize(("media_type", "data", "expected"), [
    (statements.SPDX_JSON, json.dumps(signing.spdx_document(packages=4)).encode(), (SPDX, 4)),
    (statements.SPDX_TEXT, signing.spdx_tag_value(packages=2), (SPDX, 2)),
    (statements.CYCLONEDX_JSON,
     json.dumps(signing.cyclonedx_bom(signing.component("a", signing.component("b")))).encode(), (CYCLONEDX, 2)),
    (statements.SPDX_JSON, json.dumps({"spdxVersion": "SPDX-2.3"}).encode(), (SPDX, 0)),
])
def test_standalone_sbom_documents_are_counted(media_type, data, expected):
    layer = signing.layer(media_type, data)
    assert _read(layer) == Statements(sboms=(Sbom(expected[0], layer.digest, expected[1], IMAGE),))


@pytest.mark.parametrize(("media_type", "data", "problem"), [
    (statements.SPDX_JSON, b"{}", "not an SPDX document"),
    (statements.SPDX_JSON, b'{"spdxVersion": "SPDX-2.3", "packages": {}}', "SPDX packages is not a list"),
    (statements.SPDX_TEXT, b"PackageName: x", "not an SPDX tag-value document"),
    (statements.SPDX_TEXT, b"\xff", "the SPDX document is not UTF-8"),
    (statements.CYCLONEDX_JSON, b'{"bomFormat": "SPDX"}', "not a CycloneDX BOM"),
    (statements.CYCLONEDX_JSON, b'{"bomFormat": "CycloneDX", "components": [{"components": 1}]}',
     "CycloneDX components is not a list"),
])
def test_malformed_sbom_documents_are_problems(media_type, data, problem):
    layer = signing.layer(media_type, data)
    assert _read(layer) == Statements(problems=(f"{layer.digest}: {problem}",))


def test_components_nested_too_deeply_are_refused():
    bom = signing.component("leaf")
    for depth in range(statements.MAX_NESTING):
        bom = signing.component(f"level-{depth}", bom)
    layer = signing.layer(statements.CYCLONEDX_JSON, json.dumps(signing.cyclonedx_bom(bom)).encode())
    assert _read(layer).problems == (f"{layer.digest}: CycloneDX components nest deeper than 64",)


# --- hostile bytes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "problem"), [
    (b"\xff\xfe{", "the statement is not JSON"),
    (b"not json", "the statement is not JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "the statement is nested too deeply"),
    (b"[]", "not an in-toto statement"),
    (json.dumps({"_type": "https://in-toto.io/Statement/v2"}).encode(), "not an in-toto statement"),
    (json.dumps({"_type": "https://in-toto.io/Statement/v1", "subject": []}).encode(),
     "the statement names no subject digest"),
    (json.dumps({"_type": "https://in-toto.io/Statement/v1", "subject": [{"digest": {"sha256": "../../x"}}]})
     .encode(), "the statement names no subject digest"),
    (json.dumps({"_type": "https://in-toto.io/Statement/v1", "subject": [{"digest": "sha256"}]}).encode(),
     "the statement names no subject digest"),
])
def test_malformed_statements_are_problems(data, problem):
    layer = signing.layer(IN_TOTO, data)
    [found] = _read(layer).problems
    assert found.startswith(f"{layer.digest}: {problem}")


@pytest.mark.parametrize("envelope", [b"{", b"[]", b'{"payloadType": "x", "payload": "@@", "signatures": []}'])
def test_malformed_dsse_envelopes_are_problems(envelope):
    [problem] = _read(signing.layer(COSIGN_ATTESTATION, envelope)).problems
    assert "DSSE" in problem


def test_an_oversized_statement_is_refused_unread(monkeypatch):
    monkeypatch.setattr(statements, "MAX_DOCUMENT_BYTES", 100)
    layer = _provenance(SLSA_V02, signing.slsa_v02_buildkit())
    unread = signing.layer("application/octet-stream", b"x" * 200)  # not a statement: no size to mind
    expected = f"{layer.digest}: {len(layer.data)} bytes is more than a statement may hold (100)"
    assert _read(layer, unread).problems == (expected,)


def test_every_layer_is_read_and_problems_do_not_hide_the_rest():
    good = _provenance(SLSA_V1, signing.slsa_v1_github())
    bad = signing.layer(IN_TOTO, b"nope")
    sbom = signing.layer(statements.SPDX_JSON, json.dumps(signing.spdx_document(packages=1)).encode())
    ignored = signing.layer("application/vnd.oci.image.layer.v1.tar+gzip", b"\x1f\x8b" * 100)
    result = _read(bad, good, ignored, sbom)
    assert (len(result.builds), result.sboms, len(result.problems)) == (1, (Sbom(SPDX, sbom.digest, 1, IMAGE),), 1)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300), media_type=st.sampled_from(
    [IN_TOTO, COSIGN_ATTESTATION, statements.SPDX_JSON, statements.SPDX_TEXT, statements.CYCLONEDX_JSON]))
def test_arbitrary_bytes_never_raise(data, media_type):
    result = _read(signing.layer(media_type, data))
    assert not result.builds


@settings(max_examples=100, deadline=None)
@given(document=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                             lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                                 st.sampled_from(["subject", "digest", "sha256", "predicate", "builder", "id",
                                                  "packages", "components", "metadata", "runDetails"]),
                                 inner, max_size=4), max_leaves=20),
       predicate_type=st.sampled_from([SLSA_V02, SLSA_V1, SPDX, CYCLONEDX]))
def test_arbitrary_statement_shapes_never_raise(document, predicate_type):
    data = json.dumps({"_type": "https://in-toto.io/Statement/v1", "subject": [{"digest": {"sha256": "a" * 64}}],
                       "predicateType": predicate_type, "predicate": document}).encode()
    _read(signing.layer(IN_TOTO, data))
