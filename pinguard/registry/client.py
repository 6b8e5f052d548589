"""The OCI distribution API as pinguard uses it: manifests, blobs by digest, tags, referrers.

Requests are the scarce resource (ECR Public allows one a second), so within one
run no request is made twice: what a tag points to is asked once, a repository's
tags are listed once, and content comes from the content-addressed cache when it
is there. A tag the cache has never seen costs one GET (the body, hashed, is the
digest); a tag seen before costs one HEAD, plus a GET by digest only when it
moved to content not yet cached.
"""
from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import quote

from pinguard import untrusted_json
from pinguard.errors import DigestMismatch, NotFound, PinguardError, RegistryError
from pinguard.reference import is_digest
from pinguard.registry.auth import TokenCache
from pinguard.registry.bodies import BodyTooLarge, follow
from pinguard.registry.cache import RegistryCache
from pinguard.registry.credentials import CredentialStore
from pinguard.registry.manifest import ACCEPT, OCI_INDEX, Descriptor, ManifestBody, digest_of, media_type_of
from pinguard.registry.pacer import Deadline, Pacer
from pinguard.registry.settings import RegistrySettings
from pinguard.registry.transport import Transport
from pinguard.registry.wire import Response
from pinguard.untrusted_text import shown

_LINK_NEXT = re.compile(r'<([^<>]+)>\s*;\s*rel="?next"?')  # `<` excluded: a header of them costs no rescans
# One listing of tags, all its pages together: a repository with more is not listed (each tag is
# some 60 bytes of memory, and its page might list the same tags over and over).
_MAX_TAG_PAGES = 1000
_MAX_TAGS = 100_000
_MAX_TAG_LIST_BYTES = 8 * 1024 * 1024
_TAG_PAGE_FIELDS = 64  # values of a tag page besides its tags ("name", its value, the document)
_MAX_REFERRER_PAGES = 20  # each a request; a subject with more referrers than that is not one to trust


@dataclass(frozen=True)
class ManifestHead:
    digest: str | None  # None when the registry sends no Docker-Content-Digest
    media_type: str
    size: int | None


class RegistryClient:
    """Talks to any number of registries, one keep-alive transport each."""

    def __init__(self, settings: RegistrySettings, cache: RegistryCache | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.cache = cache or RegistryCache(None)
        self._tokens = TokenCache()
        self._credentials = CredentialStore(settings.env)
        self._sleep = sleep
        self.deadline = Deadline(time.monotonic() + settings.timeout, settings.timeout)
        self._transports: dict[str, Transport] = {}
        self._tags: dict[str, list[str] | RegistryError] = {}
        self._tag_digests: dict[str, str] = {}  # "registry/repository:tag" -> digest, as learnt in this run
        self._referrers: dict[str, list[Descriptor] | None] = {}
        self._manifests: dict[str, ManifestBody] = {}  # digest -> the cached manifest, read once a run
        self._referrers_api: dict[str, bool] = {}  # registry -> whether it has the referrers API
        self._inflight: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *_: object) -> None:
        for transport in self._transports.values():
            transport.close()
        self.cache.close()

    def transport(self, registry: str) -> Transport:
        """`registry`'s session, for exchanges this client does not make itself (pushing: registry.upload)."""
        return self._transport(registry)

    def _transport(self, registry: str) -> Transport:
        with self._lock:
            if registry not in self._transports:
                self._transports[registry] = Transport(
                    registry, self.settings, self._tokens, self._credentials.lookup, self.cache, self.deadline,
                    self._sleep,
                )
            return self._transports[registry]

    def expect(self, repositories: Iterable[tuple[str, str]]) -> None:
        """The (registry, repository) pairs this run will ask about: each registry's first token covers them all."""
        scopes: dict[str, list[str]] = {}
        for registry, repository in repositories:
            scopes.setdefault(registry, []).append(_pull(repository))
        for registry, wanted in scopes.items():
            with contextlib.suppress(PinguardError):  # a registry that cannot be reached says so when asked
                self._transport(registry).expect(wanted)

    def held_to(self, registry: str) -> str | None:
        """How `registry` is paced now, once it has been reached."""
        with self._lock:
            transport = self._transports.get(registry)
        return transport.pacer.describe() if transport is not None else None

    def pacer(self, registry: str) -> Pacer:
        """The pace `registry` is asked at (its transport is set up on first use)."""
        return self._transport(registry).pacer

    def manifest_for_tag(self, registry: str, repository: str, tag: str) -> ManifestBody:
        """What `tag` points to now, verified, at the fewest requests (see the module's docstring)."""
        key = f"{registry}/{repository}:{tag}"
        with self._once("tag:" + key):
            digest = self._tag_digests.get(key)
            if digest is not None:
                return self.cached_manifest(registry, repository, digest)
            if self.cache.tag_digest(key) is None:
                return self.fresh_manifest(registry, repository, tag)
            head = self.head_manifest(registry, repository, tag)
            if head.digest is None:  # a registry that does not say: the body will
                return self.fresh_manifest(registry, repository, tag)
            body = self.cached_manifest(registry, repository, head.digest)
            self._learnt(key, body.digest)
            # A cached body that does not declare its media type has the one the HEAD was served with.
            return body if body.media_type else ManifestBody(body.data, body.digest, head.media_type)

    def digest_for_tag(self, registry: str, repository: str, tag: str) -> str:
        """What `tag` points to now: asked once a run, by HEAD (which Docker Hub does not count as a pull)."""
        key = f"{registry}/{repository}:{tag}"
        with self._once("tag:" + key):
            digest = self._tag_digests.get(key)
            if digest is None:
                digest = self.head_manifest(registry, repository, tag).digest
                if digest is None:
                    return self.fresh_manifest(registry, repository, tag).digest
                self._learnt(key, digest)
            return digest

    def _learnt(self, key: str, digest: str) -> None:
        self._tag_digests[key] = digest
        self.cache.remember_tag_digest(key, digest)

    def head_manifest(self, registry: str, repository: str, reference: str) -> ManifestHead:
        response = self._manifest_request("HEAD", registry, repository, reference)
        size = response.headers.get("Content-Length")
        digest = response.headers.get("Docker-Content-Digest") or None
        if digest is not None and not is_digest(digest):
            raise RegistryError(f"{registry}/{repository}: the registry sent a malformed digest for {reference}")
        return ManifestHead(
            digest=digest,
            media_type=response.headers.get("Content-Type", "").split(";")[0].strip(),
            size=int(size) if size and _DECIMAL.fullmatch(size) else None,
        )

    def cached_manifest(self, registry: str, repository: str, reference: str) -> ManifestBody:
        """A manifest from the cache when there, else fetched (as `fresh_manifest`) and cached.

        Only a digest is looked up in the cache (content named by its hash cannot go stale);
        a tag can move, so by tag it is always fetched.
        """
        if ":" not in reference:
            return self.fresh_manifest(registry, repository, reference)
        known = self._manifests.get(reference)
        if known is not None:
            return known
        with self._once(reference):  # references sharing a digest fetch it once
            cached = self.cache.get(reference)
            if cached is None:
                return self.fresh_manifest(registry, repository, reference)
            body = self._manifests[reference] = ManifestBody(cached, reference, media_type_of(cached, None))
            return body

    def fresh_manifest(self, registry: str, repository: str, reference: str) -> ManifestBody:
        """A manifest as the registry serves it now, never from the cache (which it fills).

        Hashed from its exact bytes; by digest they must hash to it.
        """
        by_digest = ":" in reference
        response = self._manifest_request("GET", registry, repository, reference)
        body = self._verified(response, registry, repository, reference if by_digest else None)
        self.cache.put(body.digest, body.data)
        if not by_digest:
            self._learnt(f"{registry}/{repository}:{reference}", body.digest)
        return body

    def cached_blob(self, registry: str, repository: str, digest: str) -> bytes:
        """A blob (a config, say) by digest: from the cache when there, else fetched, verified and cached."""
        _check_digest(registry, repository, digest)
        with self._once(digest):
            cached = self.cache.get(digest)
            if cached is not None:
                return cached
            response = self._transport(registry).request(
                "GET", f"/v2/{repository}/blobs/{digest}", scope=_pull(repository)
            )
            self._check(response, registry, repository, digest)
            actual = digest_of(response.content, digest.partition(":")[0])
            if actual != digest:
                raise DigestMismatch(f"{registry}/{repository}: blob {digest} was served as bytes hashing to {actual}")
            self.cache.put(digest, response.content)
            return response.content

    def tags(self, registry: str, repository: str) -> list[str]:
        """The repository's tags, listed once per run however many references ask (a failure too)."""
        key = f"{registry}/{repository}"
        with self._once("tags:" + key):
            if key not in self._tags:
                try:
                    self._tags[key] = self.list_tags(registry, repository)
                except RegistryError as exc:
                    self._tags[key] = exc
            listed = self._tags[key]
        if isinstance(listed, RegistryError):
            raise listed
        return listed

    def _once(self, key: str) -> threading.Lock:
        with self._lock:
            return self._inflight.setdefault(key, threading.Lock())

    def list_tags(self, registry: str, repository: str) -> list[str]:
        """Every tag, following `Link: <...>; rel="next"` pages; more than `_MAX_TAGS` is an error."""
        tags: list[str] = []
        pages = self._pages(registry, repository, f"/v2/{repository}/tags/list", "tag", _MAX_TAG_PAGES,
                            limit=_MAX_TAG_LIST_BYTES)
        for response in pages:
            self._check(response, registry, repository, None)
            tags.extend(_tags_page(response, registry, repository, _MAX_TAGS - len(tags)))
        return tags

    def referrers(self, registry: str, repository: str, digest: str,
                  artifact_type: str | None = None) -> list[Descriptor] | None:
        """What refers to `digest` (the OCI 1.1 referrers API), asked once a run; None where the registry
        has no such API (it answers 404), which is learnt once for the whole registry.

        Every entry is checked as an index entry is (its digest first); a registry that does not say it
        applied the `artifactType` filter (`OCI-Filters-Applied`) is filtered here.
        """
        _check_digest(registry, repository, digest)
        key = f"{registry}/{repository}@{digest}?{artifact_type or ''}"
        with self._once("referrers:" + key):
            if key not in self._referrers:
                self._referrers[key] = self._referrers_of(registry, repository, digest, artifact_type)
            return self._referrers[key]

    def _referrers_of(self, registry: str, repository: str, digest: str,
                      artifact_type: str | None) -> list[Descriptor] | None:
        # Until a registry has said whether it has the API, one request learns it while the others wait.
        unknown = registry not in self._referrers_api
        with self._once("referrers-api:" + registry) if unknown else contextlib.nullcontext():
            if self._referrers_api.get(registry) is False:
                return None
            query = f"?artifactType={quote(artifact_type, safe='')}" if artifact_type else ""
            found: list[Descriptor] = []
            pages = self._pages(registry, repository, f"/v2/{repository}/referrers/{digest}{query}", "referrer",
                                _MAX_REFERRER_PAGES, headers={"Accept": OCI_INDEX},
                                limit=self.settings.max_manifest_bytes)
            for number, response in enumerate(pages):
                if response.status_code == 404 and number == 0 and registry not in self._referrers_api:
                    self._referrers_api[registry] = False
                    return None
                self._check(response, registry, repository, f"referrers of {digest}")
                self._referrers_api[registry] = True
                found.extend(_referrers_page(response, registry, repository, digest, artifact_type))
            return found

    def _pages(self, registry: str, repository: str, path: str, what: str, max_pages: int, *,
               limit: int, headers: Mapping[str, str] | None = None) -> Iterator[Response]:
        """Each page of a listing, following `Link: <...>; rel="next"`: at most `max_pages` of them,
        `limit` bytes in all."""
        transport = self._transport(registry)
        url: str | None = None
        seen: set[str] = set()
        left = limit
        for _ in range(max_pages):
            try:
                response = transport.request("GET", path, scope=_pull(repository), url=url, headers=headers,
                                             limit=left)
            except BodyTooLarge:
                raise RegistryError(f"{registry}/{repository}: the {what}s listed are more than {limit} bytes "
                                    "in all") from None
            left -= len(response.content)
            yield response
            link = _LINK_NEXT.search(response.headers.get("Link", ""))
            if link is None:
                return
            url = follow(response.url, link.group(1))
            if url in seen:
                raise RegistryError(f"{registry}/{repository}: {what} pages loop back to {url[:200]}")
            seen.add(url)
        raise RegistryError(f"{registry}/{repository}: more than {max_pages} pages of {what}s")

    def _manifest_request(self, method: str, registry: str, repository: str, reference: str) -> Response:
        if ":" in reference:
            _check_digest(registry, repository, reference)
        response = self._transport(registry).request(
            method, f"/v2/{repository}/manifests/{reference}", scope=_pull(repository), headers={"Accept": ACCEPT},
            limit=self.settings.max_manifest_bytes,
        )
        if response.status_code == 404 and method == "HEAD":
            # HEAD carries no error body: ask again with GET to say what is missing.
            return self._manifest_request("GET", registry, repository, reference)
        try:
            self._check(response, registry, repository, reference)
        except NotFound:
            self._raise_if_no_repository(registry, repository)
            raise
        return response

    def _raise_if_no_repository(self, registry: str, repository: str) -> None:
        """Some registries (distribution among them) say MANIFEST_UNKNOWN for a missing repository too."""
        response = self._transport(registry).request("GET", f"/v2/{repository}/tags/list?n=1",
                                                     scope=_pull(repository))
        if response.status_code == 404:
            raise NotFound(f"{registry}/{repository}: repository not found")

    def _check(self, response: Response, registry: str, repository: str, reference: str | None) -> None:
        """Turn a failed answer into the error that says what is missing or refused."""
        status = response.status_code
        if status == 200:
            return
        codes = _error_codes(response)
        where = f"{registry}/{repository}"
        if "NAME_UNKNOWN" in codes:
            raise NotFound(f"{where}: repository not found")
        if status == 404 or "MANIFEST_UNKNOWN" in codes:
            raise NotFound(f"{where}: {reference} not found" if reference else f"{where}: not found")
        if status in (401, 403):
            who = self._transport(registry).identity()
            hint = "log in (docker login) or configure credentials" if who == "anonymous" else "check them"
            raise RegistryError(f"{where}: access denied ({status}) to {who}; {hint}")
        reason = shown(response.reason)  # the registry's words: cut and escaped
        raise RegistryError(f"{where}: {response.method} {response.url} answered {status} {reason}")

    def _verified(self, response: Response, registry: str, repository: str,
                  expected: str | None) -> ManifestBody:
        data = response.content
        header = response.headers.get("Docker-Content-Digest") or None
        where = f"{registry}/{repository}"
        if header is not None and not is_digest(header):
            raise RegistryError(f"{where}: the registry sent a malformed digest for {expected or 'a tag'}")
        algorithm = (expected or header or "sha256:").partition(":")[0]
        actual = digest_of(data, algorithm)
        if expected is not None and actual != expected:
            raise DigestMismatch(f"{where}: manifest {expected} was served as bytes hashing to {actual}")
        if header and header != actual:
            raise DigestMismatch(f"{where}: the registry claims digest {header} but the bytes hash to {actual}")
        return ManifestBody(data, actual, media_type_of(data, response.headers.get("Content-Type")))


def _check_digest(registry: str, repository: str, digest: str) -> None:
    """A digest from anywhere (a header, a manifest, the cache) names nothing until it is one."""
    if not is_digest(digest):
        raise RegistryError(f"{registry}/{repository}: {digest[:80]!r} is not a valid digest")


def _pull(repository: str) -> str:
    return f"repository:{repository}:pull"


_DECIMAL = re.compile(r"[0-9]{1,18}")  # ASCII: str.isdigit() takes digits int() refuses


def _tags_page(response: Response, registry: str, repository: str, room: int) -> list[str]:
    """The tags of one page, of which there may be at most `room`."""
    too_many = RegistryError(f"{registry}/{repository}: the tag list is longer than pinguard reads "
                             f"({_MAX_TAGS} tags in all)")
    # The parser makes an object of every value, and every value but the document's follows one of
    # `,:[{`: a page with more of those than tags it may add would cost memory for nothing.
    if sum(map(response.content.count, (b",", b":", b"[", b"{"))) > room + _TAG_PAGE_FIELDS:
        raise too_many
    # ECR Public serves this JSON as text/plain, so the body is parsed whatever its type.
    try:
        tags = untrusted_json.loads(response.content).get("tags") or []
    except (ValueError, AttributeError):
        raise RegistryError(f"{registry}/{repository}: tags list is not JSON") from None
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise RegistryError(f"{registry}/{repository}: tags list has a malformed 'tags' field")
    if len(tags) > room:
        raise too_many
    return tags


def _referrers_page(response: Response, registry: str, repository: str, digest: str,
                    artifact_type: str | None) -> list[Descriptor]:
    """The entries of one page (an image index), filtered by `artifact_type` when the registry did not."""
    page = ManifestBody(response.content, digest_of(response.content), OCI_INDEX)
    try:
        entries = page.descriptors()
    except RegistryError as exc:
        raise RegistryError(f"{registry}/{repository}: the referrers of {digest} are malformed: {exc}") from None
    applied = {name.strip() for name in response.headers.get("OCI-Filters-Applied", "").split(",")}
    if artifact_type is None or "artifactType" in applied:
        return entries
    return [entry for entry in entries if entry.artifact_type == artifact_type]


_ERROR_BODY_LIMIT = 64 * 1024  # an error document is a few lines; a larger body is not parsed for one


def _error_codes(response: Response) -> set[str]:
    if len(response.content) > _ERROR_BODY_LIMIT:
        return set()
    try:
        errors = untrusted_json.loads(response.content).get("errors") or []
        return {str(e.get("code")) for e in errors if isinstance(e, dict)}
    except (ValueError, AttributeError, UnicodeDecodeError):
        return set()
