"""Finding what refers to a locked image: its signatures, attestations and SBOMs.

The subjects are the index's digest and each platform manifest's. For each one:

- the OCI 1.1 referrers API, one request a subject (a registry without it answers 404,
  once a run, and is not asked again);
- where there is no such API, the tag schemes: the OCI referrers tag `sha256-HEX` (an
  index of referrers) and cosign's `sha256-HEX.sig`, `.att` and `.sbom`. The repository's
  tag list says which exist: a subject has two to four candidates, most of them absent,
  and probing costs a request each where the list costs one (and the frozen-tag search
  has often listed the tags already this run);
- the BuildKit attestation manifests inside the index, for the platform manifests they
  attest (`vnd.docker.reference.digest`).

A referrer is fetched only when it may be of a wanted kind: SOCI indexes and other
types not known here are never fetched. Its manifest and layers come by digest,
verified, from the cache when there: content cannot go stale, so a warm run asks only
the referrers API (or the tag list and a HEAD per tag) again. Layers over the size
limit, referrers that vanished since they were listed and manifests that cannot be
read are skipped, each with a note.

Everything fetched for one image, referrer manifests and layers, is held until the image's
evidence is read (and the client's cache keeps it), so it shares one byte budget
(`MAX_BYTES`): a manifest or layer whose declared size does not fit what is left is not
fetched, and what is fetched counts at the size it came in, so a registry that lies about
sizes overruns the budget by one response at most (the client's cap on a body) and then
gets no more requests for it. What the budget left unread is said in `Discovered.unread`.

`Artifact.artifact_type` is the manifest's artifactType, else its config's media type
when that is not an image config's (the OCI 1.1 rule), else its layers' media type, as
for cosign's tag scheme. The artifact types cosign and BuildKit give referrers (they
say whose artifact it is, not what) give way to the layers' media type too, so a
signature reads the same however it was found.
"""
from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pinguard.errors import NotFound, RegistryError
from pinguard.provenance.evidence import (
    COSIGN_ATTESTATION,
    COSIGN_SIGNATURE,
    IN_TOTO,
    NOTATION_SIGNATURE,
    SIGSTORE_BUNDLE,
    Artifact,
    Layer,
)
from pinguard.reference import is_digest, is_tag
from pinguard.registry.manifest import INDEX_TYPES, Descriptor, ManifestBody
from pinguard.registry.settings import CONTENT_LIMIT

if TYPE_CHECKING:  # the client pulls in requests
    from pinguard.registry.client import RegistryClient

SIGNATURES = "signatures"  # cosign, Notation, Sigstore bundles
ATTESTATIONS = "attestations"  # in-toto statements: SLSA provenance, and SBOMs attested by BuildKit or cosign
SBOMS = "sboms"  # SBOM documents on their own (cosign's `.sbom`, referrers of an SBOM type)
EVERY_KIND = frozenset({SIGNATURES, ATTESTATIONS, SBOMS})

MAX_LAYER_BYTES = CONTENT_LIMIT  # the most the client reads of any blob
MAX_BYTES = 64 << 20  # fetched in all for one image, its index and every platform's referrers together
MAX_REFERRERS = 32  # fetched per subject and source: each costs requests
MAX_LAYERS = 16  # fetched per artifact

_KINDS = {
    COSIGN_SIGNATURE: SIGNATURES,
    SIGSTORE_BUNDLE: SIGNATURES,
    NOTATION_SIGNATURE: SIGNATURES,
    COSIGN_ATTESTATION: ATTESTATIONS,
    IN_TOTO: ATTESTATIONS,
    "application/spdx+json": SBOMS,
    "text/spdx+json": SBOMS,
    "text/spdx": SBOMS,
    "application/vnd.cyclonedx+json": SBOMS,
    "application/vnd.cyclonedx+xml": SBOMS,
}
# Artifact types that say whose artifact it is; its layers' media type says what it is.
_WRAPPERS = {
    "application/vnd.dev.cosign.artifact.sig.v1+json": SIGNATURES,
    "application/vnd.dev.cosign.artifact.att.v1+json": ATTESTATIONS,
    "application/vnd.dev.cosign.artifact.sbom.v1+json": SBOMS,
    "application/vnd.docker.attestation.manifest.v1+json": ATTESTATIONS,
}
COSIGN_SUFFIXES = {".sig": SIGNATURES, ".att": ATTESTATIONS, ".sbom": SBOMS}
# Config media types that say nothing of the artifact (image configs, OCI 1.1's empty descriptor).
_PLAIN_CONFIGS = frozenset({
    "application/vnd.oci.image.config.v1+json",
    "application/vnd.docker.container.image.v1+json",
    "application/vnd.oci.empty.v1+json",
})
_REFERENCE_TYPE = "vnd.docker.reference.type"
_REFERENCE_DIGEST = "vnd.docker.reference.digest"


@dataclass(frozen=True)
class Discovered:
    artifacts: tuple[Artifact, ...]
    notes: tuple[str, ...]  # what was found but left out, and why
    unread: str | None = None  # what the byte budget left unread; None: nothing


def discover(client: RegistryClient, registry: str, repository: str, index_digest: str,
             platform_digests: Iterable[str], wanted: Collection[str] = EVERY_KIND, *,
             max_layer_bytes: int = MAX_LAYER_BYTES) -> Discovered:
    """The artifacts of the `wanted` kinds that refer to a locked image: its index (or its only
    manifest) and its platform manifests, `MAX_BYTES` of them at most. Registry faults raise;
    what is only absent does not."""
    unknown = set(wanted) - EVERY_KIND
    if unknown:
        raise ValueError(f"unknown kinds {sorted(unknown)}: expected some of {sorted(EVERY_KIND)}")
    search = _Search(client, registry, repository, frozenset(wanted), max_layer_bytes, _Budget(MAX_BYTES))
    platforms = [digest for digest in dict.fromkeys(platform_digests) if digest != index_digest]
    for subject in (index_digest, *platforms):
        search.referrers_of(subject)
    if ATTESTATIONS in wanted and platforms:
        search.index_attestations(index_digest, platforms)
    return Discovered(tuple(search.artifacts), tuple(search.notes), search.budget.unread())


class _Budget:
    """The bytes one image's search may hold, and what it left unread for want of them."""

    def __init__(self, total: int) -> None:
        self._total = total
        self._left = total
        self._refused = 0

    def affords(self, declared: int | None) -> bool:
        """Whether something of `declared` size (None: not said) may be fetched; what may not is counted."""
        if self._left <= 0 or (declared is not None and declared > self._left):
            self._refused += 1
            return False
        return True

    def spend(self, fetched: int) -> bool:
        """Count bytes fetched; False when they overran what was left (they are then not kept)."""
        self._left -= fetched
        if self._left < 0:
            self._refused += 1
            return False
        return True

    def unread(self) -> str | None:
        if not self._refused:
            return None
        return f"{self._refused} referrer manifests or layers left unread: over the {self._total}-byte budget"


class _Unreadable(Exception):
    """A referrer's manifest that cannot be read as an artifact; its text says why."""


class _Search:
    """One image's discovery: what was found so far, and the notes on what was left out."""

    def __init__(self, client: RegistryClient, registry: str, repository: str, wanted: frozenset[str],
                 max_layer_bytes: int, budget: _Budget) -> None:
        self._client = client
        self._registry = registry
        self._repository = repository
        self._wanted = wanted
        self._max_layer_bytes = max_layer_bytes
        self.budget = budget
        self._seen: set[tuple[str, str]] = set()  # (subject, manifest digest)
        self.artifacts: list[Artifact] = []
        self.notes: list[str] = []

    def referrers_of(self, subject: str) -> None:
        listed = self._client.referrers(self._registry, self._repository, subject)
        if listed is None:
            self._tagged_referrers_of(subject)
        else:
            self._follow(subject, listed, "referrers")

    def index_attestations(self, index_digest: str, platforms: Sequence[str]) -> None:
        """BuildKit's attestation manifests in the index, for the platform manifests among `platforms`."""
        index = self._client.cached_manifest(self._registry, self._repository, index_digest)
        if not index.is_index:
            return
        for entry in index.descriptors():
            attested = entry.annotations.get(_REFERENCE_DIGEST, "")
            if entry.annotations.get(_REFERENCE_TYPE) == "attestation-manifest" and attested in platforms:
                body = self._manifest(attested, entry.digest, "index", entry.size)
                if body is not None:
                    self._add(attested, body, "index")

    def _tagged_referrers_of(self, subject: str) -> None:
        """The tag schemes: the OCI referrers tag (an index of referrers), then cosign's tags."""
        tags = set(self._client.tags(self._registry, self._repository))
        index_tag = referrers_tag(subject)
        if index_tag is not None and index_tag in tags:
            index = self._tagged(index_tag)
            if index is not None:
                self._follow_index(subject, index_tag, index)
        for suffix, kind in COSIGN_SUFFIXES.items():
            tag = cosign_tag(subject, suffix)
            if kind in self._wanted and tag is not None and tag in tags:
                body = self._tagged(tag)
                if body is not None:
                    self._add(subject, body, "tag")

    def _follow_index(self, subject: str, tag: str, index: ManifestBody) -> None:
        """The referrers listed in the index the referrers tag holds (written by whoever pushed them)."""
        try:
            listed = index.descriptors() if index.is_index else None
        except RegistryError as exc:
            self.notes.append(f"{subject}: tag {tag} holds a malformed index of referrers ({exc}): not read")
            return
        if listed is None:
            self.notes.append(f"{subject}: tag {tag} holds no index of referrers: not read")
        else:
            self._follow(subject, listed, "tag")

    def _tagged(self, tag: str) -> ManifestBody | None:
        """What `tag` points to; None if it went since the tags were listed, or the budget is spent."""
        if not self.budget.affords(None):
            return None
        try:
            body = self._client.manifest_for_tag(self._registry, self._repository, tag)
        except NotFound:
            return None
        return body if self.budget.spend(len(body.data)) else None

    def _follow(self, subject: str, listed: Sequence[Descriptor], found_by: str) -> None:
        chosen = [entry for entry in listed if self._may_be_wanted(entry.artifact_type)]
        if len(chosen) > MAX_REFERRERS:
            self.notes.append(f"{subject}: {len(chosen)} referrers ({found_by}); only the first {MAX_REFERRERS} read")
        for entry in chosen[:MAX_REFERRERS]:
            if entry.media_type in INDEX_TYPES:
                self.notes.append(f"{subject}: referrer {entry.digest} ({found_by}) is an index: not read")
                continue
            body = self._manifest(subject, entry.digest, found_by, entry.size)
            if body is not None:
                self._add(subject, body, found_by)

    def _may_be_wanted(self, artifact_type: str | None) -> bool:
        """Whether a listed referrer is worth fetching: of a wanted kind, or of a type not given."""
        return artifact_type is None or _kind(artifact_type, artifact_type) in self._wanted

    def _manifest(self, subject: str, digest: str, found_by: str, declared: int) -> ManifestBody | None:
        if not self.budget.affords(declared):
            return None
        try:
            body = self._client.cached_manifest(self._registry, self._repository, digest)
        except NotFound:
            self.notes.append(f"{subject}: referrer {digest} ({found_by}) is listed but not served: skipped")
            return None
        return body if self.budget.spend(len(body.data)) else None

    def _add(self, subject: str, body: ManifestBody, found_by: str) -> None:
        if (subject, body.digest) in self._seen:
            return
        self._seen.add((subject, body.digest))
        try:
            document = _document(body)
            claimed = _subject_of(document)
            layers = _layers(document)
        except _Unreadable as exc:
            self.notes.append(f"{subject}: referrer {body.digest} ({found_by}) {exc}: skipped")
            return
        if claimed is not None and claimed != subject:
            self.notes.append(f"{subject}: referrer {body.digest} ({found_by}) refers to {claimed}: skipped")
            return
        declared = document.get("artifactType")
        artifact_type = _artifact_type(document, layers)
        if _kind(declared if isinstance(declared, str) else "", artifact_type) not in self._wanted:
            return
        annotations = document.get("annotations")
        self.artifacts.append(Artifact(
            subject=subject,
            artifact_type=artifact_type,
            manifest_digest=body.digest,
            annotations=_strings(annotations) if isinstance(annotations, dict) else {},
            layers=self._fetched(subject, body.digest, layers),
            found_by=found_by,
        ))

    def _fetched(self, subject: str, manifest: str, layers: Sequence[Descriptor]) -> tuple[Layer, ...]:
        """The layers' blobs, verified; those over the limits or gone are left out with a note."""
        if len(layers) > MAX_LAYERS:
            self.notes.append(f"{subject}: referrer {manifest} has {len(layers)} layers; only the first "
                              f"{MAX_LAYERS} read")
        fetched = []
        for layer in layers[:MAX_LAYERS]:
            if layer.size > self._max_layer_bytes:
                self.notes.append(f"{subject}: layer {layer.digest} of referrer {manifest} is {layer.size} bytes, "
                                  f"over the {self._max_layer_bytes}-byte limit: not fetched")
                continue
            if not self.budget.affords(layer.size):
                continue
            try:
                data = self._client.cached_blob(self._registry, self._repository, layer.digest)
            except NotFound:
                self.notes.append(f"{subject}: layer {layer.digest} of referrer {manifest} is not served: skipped")
                continue
            if self.budget.spend(len(data)):
                fetched.append(Layer(layer.media_type, layer.digest, layer.annotations, data))
        return tuple(fetched)


def _kind(declared: str, artifact_type: str) -> str | None:
    """Signatures, attestations or SBOMs, by the type a referrer declares or the one it was read as."""
    return _WRAPPERS.get(declared) or _KINDS.get(artifact_type)


def referrers_tag(digest: str) -> str | None:
    """The OCI referrers tag schema: `<alg>-<hex>`, the two parts cut to 32 and 64 characters."""
    algorithm, _, encoded = digest.partition(":")
    tag = f"{algorithm[:32]}-{encoded[:64]}"
    return tag if is_tag(tag) else None


def cosign_tag(digest: str, suffix: str) -> str | None:
    """cosign's `sha256-HEX.sig`; a longer digest (sha512) makes no valid tag, and cosign none."""
    tag = digest.replace(":", "-") + suffix
    return tag if is_tag(tag) else None


def _document(body: ManifestBody) -> dict[str, object]:
    if body.is_index:
        raise _Unreadable("is an index, not an artifact manifest")
    try:
        return body.json()
    except RegistryError as exc:  # not JSON, or not an object
        raise _Unreadable(str(exc)) from None


def _subject_of(document: dict[str, object]) -> str | None:
    subject = document.get("subject")
    if subject is None:
        return None
    digest = subject.get("digest") if isinstance(subject, dict) else None
    if not isinstance(digest, str) or not is_digest(digest):
        raise _Unreadable("has a malformed subject")
    return digest


def _layers(document: dict[str, object]) -> list[Descriptor]:
    entries = document.get("layers")
    if not isinstance(entries, list):
        raise _Unreadable("has no 'layers' list")
    return [_layer(entry) for entry in entries]


def _layer(entry: object) -> Descriptor:
    """A layer descriptor, checked before its digest names anything to fetch."""
    if not isinstance(entry, dict):
        raise _Unreadable("has a layer that is not an object")
    media_type, digest, size = entry.get("mediaType"), entry.get("digest"), entry.get("size")
    annotations = entry.get("annotations") or {}
    if not isinstance(digest, str) or not is_digest(digest):
        raise _Unreadable(f"has a layer whose digest is not valid: {str(digest)[:80]!r}")
    if not isinstance(media_type, str) or type(size) is not int or size < 0 or not isinstance(annotations, dict):
        raise _Unreadable(f"has a malformed layer {digest}")
    return Descriptor(media_type, digest, size, None, None, _strings(annotations))


def _artifact_type(document: dict[str, object], layers: Sequence[Descriptor]) -> str:
    declared = document.get("artifactType")
    if isinstance(declared, str) and declared and declared not in _WRAPPERS:
        return declared
    config = document.get("config")
    config_type = config.get("mediaType") if isinstance(config, dict) else None
    if isinstance(config_type, str) and config_type and config_type not in _PLAIN_CONFIGS:
        return config_type
    return layers[0].media_type if layers else ""


def _strings(mapping: dict[object, object]) -> dict[str, str]:
    return {str(key): str(value) for key, value in mapping.items()}
