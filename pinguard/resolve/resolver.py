"""The resolver: tags to digests, verified by hashing, with the evidence a lockfile records.

For a moving tag (see `tags`), the resolver names the frozen tag that serves the same digest, so a reader of
the lock can tell which release the digest was.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING

from pinguard import untrusted_json
from pinguard.clock import utc_now
from pinguard.errors import NotFound, PinguardError, RegistryError
from pinguard.reference import Reference
from pinguard.registry.manifest import ManifestBody, Platform, platforms_of, select_platforms
from pinguard.resolve.resolved import Resolved
from pinguard.resolve.tags import TagKind, TagRules

if TYPE_CHECKING:  # the client pulls in requests
    from pinguard.registry.client import RegistryClient

# Frozen tags tried, newest first, when looking for the one behind a moving tag.
MAX_ALIAS_PROBES = 5


def _work_order(references: Iterable[Reference], rules: TagRules) -> list[Reference]:
    """One repository after another, round-robin; in each, moving tags last.

    References of one repository wait on each other (one token, one tag list), so
    spreading repositories over the workers keeps them all busy. A moving tag's
    frozen alias is often referenced too: asked first, its digest is known by the
    time the moving tag's alias search would have to ask for it.
    """
    by_repository: dict[str, list[Reference]] = {}
    for reference in references:
        by_repository.setdefault(reference.name, []).append(reference)
    queues = [sorted(queue, key=lambda r: _is_moving(r, rules)) for queue in by_repository.values()]
    longest = max(map(len, queues), default=0)
    return [queue[i] for i in range(longest) for queue in queues if i < len(queue)]


def _is_moving(reference: Reference, rules: TagRules) -> bool:
    return rules.kind(reference.name, reference.tag or "latest") is TagKind.MOVING


class Resolver:
    def __init__(
        self,
        client: RegistryClient,
        platforms: Sequence[Platform] = (Platform("linux", "amd64"),),
        tag_rules: TagRules | None = None,
        clock: Callable[[], str] = utc_now,
    ) -> None:
        self._client = client
        self._platforms = tuple(platforms)
        self._rules = tag_rules or TagRules()
        self._clock = clock
        # Content named by digest reads the same for every reference sharing it: read once a run.
        self._indexes: dict[str, dict[str, str] | RegistryError] = {}  # index -> its platforms, or why not
        self._image_platforms: dict[str, Platform] = {}  # image manifest -> the platform its config names

    def resolve_all(self, references: Sequence[Reference],
                    progress: Callable[[Reference], None] | None = None) -> dict[Reference, Resolved | PinguardError]:
        """Each distinct reference resolved once, concurrently; failures are returned, not raised.

        `progress` is told of each reference done, from the calling thread.
        """
        unique = _work_order(dict.fromkeys(references), self._rules)
        self._client.expect((reference.registry, reference.repository) for reference in unique)
        with ThreadPoolExecutor(max_workers=max(1, self._client.settings.workers)) as pool:
            futures = {pool.submit(self._resolve_or_error, reference): reference for reference in unique}
            if progress is not None:
                for future in as_completed(futures):
                    progress(futures[future])
        outcomes = {reference: future.result() for future, reference in futures.items()}
        return {reference: outcomes[reference] for reference in references if reference in outcomes}

    def _resolve_or_error(self, reference: Reference) -> Resolved | PinguardError:
        try:
            return self.resolve(reference)
        except PinguardError as exc:
            return exc

    def resolve(self, reference: Reference) -> Resolved:
        """What the registry serves for the reference now, verified, with the evidence.

        A reference written with a tag and a digest is resolved by its digest, and its tag
        is asked where it points (one HEAD): a digest written beside a tag is a claim that
        the tag served it, which nothing else checks.
        """
        registry, repository = reference.registry, reference.repository
        tag = reference.tag if reference.digest else (reference.tag or "latest")
        if reference.digest is None:
            assert tag is not None
            body = self._client.manifest_for_tag(registry, repository, tag)
            tag_digest: str | None = body.digest
        else:
            body = self._by_digest(reference, reference.digest)
            tag_digest = self._tag_digest(reference, tag) if tag else body.digest
        kind = self._rules.kind(reference.name, tag) if tag else TagKind.OTHER
        return Resolved(
            name=reference.name,
            tag=tag,
            digest=body.digest,
            media_type=body.media_type,
            size=len(body.data),
            tag_kind=kind,
            frozen_tag=self.frozen_alias(reference, tag, body.digest) if tag and kind is TagKind.MOVING else None,
            resolved_at=self._clock(),
            platforms=self._platforms_of(reference, body),
            tag_served=tag_digest == body.digest,
            tag_digest=None if tag_digest == body.digest else tag_digest,
        )

    def _tag_digest(self, reference: Reference, tag: str) -> str | None:
        """Where `tag` points now; None when the registry does not serve it."""
        try:
            return self._client.digest_for_tag(reference.registry, reference.repository, tag)
        except NotFound:
            return None

    def _by_digest(self, reference: Reference, digest: str) -> ManifestBody:
        """Content by digest; from the cache only once the registry says it still serves it."""
        registry, repository = reference.registry, reference.repository
        if self._client.cache.get(digest) is None:
            return self._client.fresh_manifest(registry, repository, digest)
        head = self._client.head_manifest(registry, repository, digest)
        if head.digest and head.digest != digest:
            raise RegistryError(f"{reference}: the registry serves {head.digest} under that digest")
        return self._client.cached_manifest(registry, repository, digest)

    def _platforms_of(self, reference: Reference, body: ManifestBody) -> dict[str, str]:
        if body.is_index:
            platforms = self._indexes.get(body.digest)
            if platforms is None:
                try:
                    select_platforms(body, self._platforms)  # a wanted platform missing is an error
                    platforms = platforms_of(body)
                except RegistryError as exc:
                    platforms = exc
                self._indexes[body.digest] = platforms
            if isinstance(platforms, RegistryError):
                raise type(platforms)(str(platforms))
            return platforms
        platform = self.image_platform(reference, body)
        if not any(wanted.matches(platform) for wanted in self._platforms):
            wanted_text = ", ".join(map(str, self._platforms))
            raise RegistryError(f"{reference}: the image is {platform}, not {wanted_text}")
        return {str(platform): body.digest}

    def image_platform(self, reference: Reference, body: ManifestBody) -> Platform:
        """The platform a single image's config names (os, architecture, variant): its config is read once a run,
        from the content-addressed cache when there."""
        platform = self._image_platforms.get(body.digest)
        if platform is None:
            config = self._config(reference, body)
            os_name, arch = config.get("os"), config.get("architecture")
            if not isinstance(os_name, str) or not isinstance(arch, str):
                raise RegistryError(f"{reference}: the image's config names no platform (os and architecture)")
            variant = config.get("variant")
            platform = Platform(os_name, arch, variant if isinstance(variant, str) and variant else None)
            self._image_platforms[body.digest] = platform
        return platform

    def _config(self, reference: Reference, body: ManifestBody) -> dict[str, object]:
        descriptor = body.json().get("config")
        if not isinstance(descriptor, dict) or not isinstance(descriptor.get("digest"), str):
            raise RegistryError(f"{reference}: {body.digest} is neither an image index nor an image manifest "
                                f"(media type {body.media_type or 'unknown'})")
        blob = self._client.cached_blob(reference.registry, reference.repository, descriptor["digest"])
        try:
            config = untrusted_json.loads(blob)
        except (ValueError, UnicodeDecodeError):
            raise RegistryError(f"{reference}: image config {descriptor['digest']} is not JSON") from None
        return config if isinstance(config, dict) else {}

    def frozen_alias(self, reference: Reference, tag: str, digest: str) -> str | None:
        """The newest frozen tag serving `digest`: candidates newest first, stop at the first match.

        Only the newest few candidates are tried (a moving tag follows the newest build), each
        asked once a run; that none serves the digest is remembered.
        """
        cache, name = self._client.cache, reference.name
        known = cache.frozen_tag(name, tag, digest)
        if known is not None:
            return known  # frozen tags do not move: what served this digest still does
        if cache.no_frozen_tag(name, tag, digest):
            return None
        registry, repository = reference.registry, reference.repository
        candidates = self._rules.frozen_candidates(name, tag, self._client.tags(registry, repository))
        for candidate in candidates[:MAX_ALIAS_PROBES]:
            if self._client.digest_for_tag(registry, repository, candidate) == digest:
                cache.remember_frozen_tag(name, tag, digest, candidate)
                return candidate
        cache.remember_no_frozen_tag(name, tag, digest)
        return None
