"""Reading in-toto statements: SLSA provenance (who built an image, from what) and SBOMs (what it holds).

A statement comes raw (BuildKit's attestation layers, `application/vnd.in-toto+json`: unsigned) or
inside a DSSE envelope (cosign attestations): signed when a trusted cosign key made one of its
signatures, else recorded with why none verified, which no policy takes for unsigned. SBOMs
also come as plain documents (cosign's `.sbom` layers). Everything read is hostile: what cannot be
read becomes a problem naming the layer, never an exception, and only printable, bounded text is kept.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from pinguard.provenance.evidence import (
    COSIGN_ATTESTATION,
    CYCLONEDX,
    IN_TOTO,
    SLSA_V02,
    SLSA_V1,
    SPDX,
    Artifact,
    Build,
    Layer,
    Sbom,
)
from pinguard.provenance.payloads import Unreadable, load_json, member
from pinguard.provenance.signatures import open_dsse
from pinguard.provenance.trust import Trust
from pinguard.reference import is_digest

STATEMENT_TYPES = ("https://in-toto.io/Statement/v0.1", "https://in-toto.io/Statement/v1")
SPDX_JSON = "text/spdx+json"
SPDX_TEXT = "text/spdx"
CYCLONEDX_JSON = "application/vnd.cyclonedx+json"
_DOCUMENTS = (SPDX_JSON, SPDX_TEXT, CYCLONEDX_JSON)  # SBOMs stored as they are (cosign's .sbom)
MAX_DOCUMENT_BYTES = 64 << 20  # an SBOM of a CUDA image runs to tens of megabytes
MAX_NESTING = 64  # CycloneDX components inside components

_BUILDKIT_METADATA = "https://mobyproject.org/buildkit@v1#metadata"
_MAX_TEXT = 2048  # builder ids, URIs, commits and times are short; longer is not kept


class Statements(NamedTuple):
    """What an artifact's layers say."""

    builds: tuple[Build, ...] = ()
    sboms: tuple[Sbom, ...] = ()
    problems: tuple[str, ...] = ()  # "LAYER-DIGEST: why it could not be read"


def read(artifact: Artifact, expected_subject: str, trust: Trust) -> Statements:
    """Every SLSA provenance and SBOM in `artifact`, checked against the digest it was found for.

    Only a cosign key file in `trust` that cannot be used raises (a `PinguardError`).
    """
    return _joined(_read_layer(layer, expected_subject, trust) for layer in artifact.layers)


def statement(data: bytes, digest: str, expected_subject: str, *, signed: bool = False,
              problem: str | None = None) -> Statements:
    """One in-toto statement (`digest`: of the bytes holding it); raises `Unreadable`.

    `signed` and `problem` say what became of its envelope's signature (`Build`). Predicate
    types other than SLSA provenance and SBOMs (vulnerability scans, say) give nothing.
    """
    document = load_json(data, "the statement")
    if member(document, "_type") not in STATEMENT_TYPES:
        raise Unreadable("not an in-toto statement")
    subjects = _subjects(member(document, "subject"))
    matches = expected_subject in subjects
    subject = expected_subject if matches else subjects[0]
    predicate_type = member(document, "predicateType")
    predicate = member(document, "predicate")
    if predicate_type in (SLSA_V02, SLSA_V1):
        origin = _slsa_v02(predicate) if predicate_type == SLSA_V02 else _slsa_v1(predicate)
        build = Build(str(predicate_type), *origin, statement_digest=digest, subject=subject,
                      subject_matches=matches, signed=signed, problem=problem)
        return Statements(builds=(build,))
    kind = _sbom_kind(predicate_type)
    if kind is None:
        return Statements()
    if not matches:
        raise Unreadable(f"an SBOM about {subject}, not this image")
    return Statements(sboms=(Sbom(kind, digest, _packages(kind, predicate), subject),))


def _read_layer(layer: Layer, expected_subject: str, trust: Trust) -> Statements:
    if layer.media_type not in (IN_TOTO, COSIGN_ATTESTATION, *_DOCUMENTS):
        return Statements()
    try:
        if len(layer.data) > MAX_DOCUMENT_BYTES:
            raise Unreadable(f"{len(layer.data)} bytes is more than a statement may hold ({MAX_DOCUMENT_BYTES})")
        if layer.media_type == IN_TOTO:
            return statement(layer.data, layer.digest, expected_subject)
        if layer.media_type == COSIGN_ATTESTATION:
            envelope = open_dsse(layer.data, trust)
            if envelope.payload_type != IN_TOTO:
                raise Unreadable("the DSSE envelope does not hold an in-toto statement")
            return statement(envelope.payload, layer.digest, expected_subject, signed=envelope.signer is not None,
                             problem=envelope.problem)
        return Statements(sboms=(_document(layer, expected_subject),))
    except Unreadable as why:
        return Statements(problems=(f"{layer.digest}: {why}",))


def _joined(parts: Iterable[Statements]) -> Statements:
    builds: list[Build] = []
    sboms: list[Sbom] = []
    problems: list[str] = []
    for part in parts:
        builds += part.builds
        sboms += part.sboms
        problems += part.problems
    return Statements(tuple(builds), tuple(sboms), tuple(problems))


def _subjects(entries: object) -> list[str]:
    """Every well-formed `algorithm:hex` the statement's subjects name, in order."""
    found = [
        f"{algorithm}:{value}"
        for entry in (entries if isinstance(entries, list) else [])
        for algorithm, value in _items(member(entry, "digest"))
        if is_digest(f"{algorithm}:{value}")
    ]
    if not found:
        raise Unreadable("the statement names no subject digest")
    return found


def _items(value: object) -> list[tuple[object, object]]:
    return list(value.items()) if isinstance(value, dict) else []


# --- SLSA -------------------------------------------------------------------------------------------


class _Origin(NamedTuple):
    builder: str | None
    source: str | None
    revision: str | None
    started: str | None
    finished: str | None


def _slsa_v02(predicate: object) -> _Origin:
    metadata = member(predicate, "metadata")
    source, revision = _first_source(
        _config_source(member(predicate, "invocation", "configSource")),
        _vcs(member(metadata, _BUILDKIT_METADATA, "vcs")),
    )
    return _Origin(_text(member(predicate, "builder", "id")), source, revision,
                   _text(member(metadata, "buildStartedOn")), _text(member(metadata, "buildFinishedOn")))


def _slsa_v1(predicate: object) -> _Origin:
    definition = member(predicate, "buildDefinition")
    external = member(definition, "externalParameters")
    metadata = member(predicate, "runDetails", "metadata")
    source, revision = _first_source(
        _config_source(member(external, "configSource")),  # BuildKit, from a Git context
        _git_dependency(member(definition, "resolvedDependencies")),  # GitHub Actions
        (_text(member(external, "workflow", "repository")), None),
        _vcs(member(metadata, "buildkit_metadata", "vcs")),  # BuildKit, from a local context
    )
    return _Origin(_text(member(predicate, "runDetails", "builder", "id")), source, revision,
                   _text(member(metadata, "startedOn")), _text(member(metadata, "finishedOn")))


def _config_source(config: object) -> tuple[str | None, str | None]:
    return _text(member(config, "uri")), _commit(member(config, "digest"))


def _vcs(vcs: object) -> tuple[str | None, str | None]:
    # BuildKit records what the client says (vcs:source, vcs:revision) without checking it.
    return _text(member(vcs, "source")), _text(member(vcs, "revision"))


def _git_dependency(dependencies: object) -> tuple[str | None, str | None]:
    for dependency in dependencies if isinstance(dependencies, list) else []:
        uri = _text(member(dependency, "uri"))
        commit = _commit(member(dependency, "digest"))
        if uri and (uri.startswith("git+") or _text(member(dependency, "digest", "gitCommit"))):
            return uri, commit
    return None, None


def _commit(digest: object) -> str | None:
    return _text(member(digest, "gitCommit")) or _text(member(digest, "sha1"))


def _first_source(*candidates: tuple[str | None, str | None]) -> tuple[str | None, str | None]:
    """The first candidate naming a source, as its repository, with the revision it came with."""
    for source, revision in candidates:
        if source:
            return _repository(source), revision
    return None, None


def _repository(uri: str) -> str:
    """The repository a source URI names, without `git+`, a `#ref` fragment or an `@ref` after the path."""
    uri = uri.removeprefix("git+").partition("#")[0]
    scheme, separator, rest = uri.partition("://")
    if not separator:
        return uri
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}{slash}{path.partition('@')[0]}"


def _text(value: object) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= _MAX_TEXT and value.isprintable():
        return value
    return None


# --- SBOMs ------------------------------------------------------------------------------------------


def _sbom_kind(predicate_type: object) -> str | None:
    """SPDX or CycloneDX, from the predicate type (some tools add a version: `.../Document/v2.3`)."""
    for kind in (SPDX, CYCLONEDX):
        if isinstance(predicate_type, str) and (predicate_type == kind or predicate_type.startswith(kind + "/")):
            return kind
    return None


def _document(layer: Layer, subject: str) -> Sbom:
    """An SBOM stored as it is, by its media type, about the manifest it was found for."""
    if layer.media_type == SPDX_TEXT:
        return Sbom(SPDX, layer.digest, _tag_value_packages(layer.data), subject)
    kind = SPDX if layer.media_type == SPDX_JSON else CYCLONEDX
    return Sbom(kind, layer.digest, _packages(kind, load_json(layer.data, "the SBOM")), subject)


def _packages(kind: str, document: object) -> int:
    if kind == SPDX:
        if not isinstance(member(document, "spdxVersion"), str):
            raise Unreadable("not an SPDX document")
        return len(_list(member(document, "packages"), "SPDX packages"))
    if member(document, "bomFormat") != "CycloneDX":
        raise Unreadable("not a CycloneDX BOM")
    return _components(member(document, "components"))


def _components(top: object) -> int:
    """CycloneDX components, counting those nested inside others."""
    total = 0
    pending = [(top, 1)]
    while pending:
        components, depth = pending.pop()
        if depth > MAX_NESTING:
            raise Unreadable(f"CycloneDX components nest deeper than {MAX_NESTING}")
        listed = _list(components, "CycloneDX components")
        total += len(listed)
        pending += [(member(c, "components"), depth + 1) for c in listed if member(c, "components") is not None]
    return total


def _list(items: object, what: str) -> list[object]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise Unreadable(f"{what} is not a list")
    return items


def _tag_value_packages(data: bytes) -> int:
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise Unreadable("the SPDX document is not UTF-8") from None
    if not any(line.startswith("SPDXVersion:") for line in lines):
        raise Unreadable("not an SPDX tag-value document")
    return sum(line.startswith("PackageName:") for line in lines)
