"""The OCI distribution push API on a registry's `Transport`: blobs looked up, mounted and uploaded,
manifests looked up and put.

A blob becomes content only at the final PUT of its upload, which names its digest: the registry
hashes what it received and refuses a mismatch, so an upload cut short (a run killed midway) is
never served, and the next run starts it over. Bodies go up a chunk at a time, each a request of
bounded size (`append`), so no blob is ever held whole, and come down the same way (`BlobReader`).

A registry's word that it holds a blob counts only where its answer could be checked: a blob `HEAD`
answering 200 with the blob's digest (Docker-Content-Digest) or its size (Content-Length), and
contradicting neither (`blob_absence`). A registry answering 200 to every HEAD proves nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import urlencode, urlsplit, urlunsplit

from pinguard.errors import DigestMismatch, RegistryError
from pinguard.reference import is_digest
from pinguard.registry.bodies import BodyTooLarge, follow
from pinguard.registry.manifest import ACCEPT, ManifestBody, digest_of, media_type_of
from pinguard.registry.settings import MANIFEST_LIMIT
from pinguard.registry.transport import Transport
from pinguard.registry.wire import Response
from pinguard.untrusted_text import shown

CHUNK = 8 << 20  # bytes in a range read and in a chunk sent, unless a caller says otherwise
_DECIMAL = re.compile(r"[0-9]{1,18}")
_RANGE = re.compile(r"(?:bytes=)?0-([0-9]{1,18})")  # what an upload holds; some registries write `bytes=`
_OCTETS = {"Content-Type": "application/octet-stream"}


@dataclass(frozen=True)
class Upload:
    """An upload in progress: where its next chunk goes, and how much the registry holds."""

    url: str
    offset: int = 0
    min_chunk: int = 0  # the least any chunk but the last may be (OCI-Chunk-Min-Length); 0: any


class Uploader:
    """Pushes to one registry; with `push=False`, only looks (as `verify --copies` does)."""

    def __init__(self, transport: Transport, *, push: bool = True) -> None:
        self._transport = transport
        self.registry = transport.registry
        self._actions = "pull,push" if push else "pull"

    def scope(self, repository: str) -> str:
        return f"repository:{repository}:{self._actions}"

    def has_blob(self, repository: str, digest: str, size: int) -> bool:
        """Whether `repository` proves it holds the blob (`blob_absence`)."""
        return self.blob_absence(repository, digest, size) is None

    def blob_absence(self, repository: str, digest: str, size: int) -> str | None:
        """Why `repository` does not prove it holds the blob of `digest` and `size`; None when it does. A refusal
        (401, 403) or a failure (5xx) is an error, not an absence."""
        response = self._request("HEAD", repository, f"/v2/{repository}/blobs/{digest}")
        if response.status_code == 404:
            return "HEAD answered 404"
        self._expect(response, 200, repository, f"HEAD blob {digest}")
        said = response.headers.get("Docker-Content-Digest")
        length = response.headers.get("Content-Length")
        if said is not None and said != digest:
            return f"HEAD answered 200 naming {shown(said)}"
        if length is not None and not (_DECIMAL.fullmatch(length) and int(length) == size):
            return f"HEAD answered 200 with Content-Length {shown(length)}, where its manifest says {size}"
        if said is None and length is None:
            return "HEAD answered 200 without Content-Length or Docker-Content-Digest"
        return None

    def mount(self, repository: str, digest: str, holder: str) -> Upload | None:
        """The blob mounted from `holder`, another repository of this registry: None when it was; else the
        upload to send it through (one the registry started instead, or a new one where it refused)."""
        query = urlencode({"mount": digest, "from": holder})
        try:
            response = self._request("POST", repository, f"/v2/{repository}/blobs/uploads/?{query}",
                                     scope=f"{self.scope(repository)} repository:{holder}:pull")
        except RegistryError:  # a token for both repositories refused: upload it the plain way
            return self.start(repository)
        if response.status_code == 201:
            self._check_digest(response, repository, digest, "mounted blob")
            return None
        if response.status_code == 202:
            return self._upload(response, repository)
        return self.start(repository)

    def start(self, repository: str) -> Upload:
        response = self._request("POST", repository, f"/v2/{repository}/blobs/uploads/")
        self._expect(response, 202, repository, "start an upload")
        return self._upload(response, repository)

    def append(self, repository: str, upload: Upload, chunk: bytes) -> Upload:
        """`chunk` sent at the upload's offset (a PATCH); the upload as the registry now holds it."""
        end = upload.offset + len(chunk)
        headers = {**_OCTETS, "Content-Range": f"{upload.offset}-{end - 1}"}
        response = self._request("PATCH", repository, url=upload.url, headers=headers, data=chunk)
        self._expect(response, 202, repository, f"send bytes {upload.offset}-{end - 1}")
        held = _RANGE.fullmatch((response.headers.get("Range") or f"0-{end - 1}").strip())
        if held is None or int(held.group(1)) + 1 != end:
            raise RegistryError(f"{self.registry}/{repository}: the upload holds "
                                f"{shown(response.headers.get('Range') or '')!r} after bytes 0-{end - 1} were sent")
        return replace(self._upload(response, repository), offset=end, min_chunk=upload.min_chunk)

    def finish(self, repository: str, upload: Upload, digest: str, size: int, last: bytes = b"") -> None:
        """The upload closed with its last chunk and committed as `digest`: the registry checks the bytes hash to it."""
        parts = urlsplit(upload.url)
        query = "&".join(part for part in (parts.query, urlencode({"digest": digest})) if part)
        response = self._request("PUT", repository, url=urlunsplit(parts._replace(query=query)), headers=_OCTETS,
                                 data=last)
        if response.status_code == 201:
            self._check_digest(response, repository, digest, "uploaded blob")
            return
        # A PUT retried after the registry committed the first finds no upload; the blob then is there.
        if response.status_code == 404 and self.has_blob(repository, digest, size):
            return
        self._expect(response, 201, repository, f"commit blob {digest} (the registry checks the bytes hash to it)")

    def manifest_digest(self, repository: str, reference: str) -> str | None:
        """The digest `reference` (a tag or a digest) names in `repository`; None where it names nothing."""
        response = self._request("HEAD", repository, f"/v2/{repository}/manifests/{reference}",
                                 headers={"Accept": ACCEPT})
        if response.status_code == 404:
            return None
        self._expect(response, 200, repository, f"HEAD manifest {reference}")
        digest = response.headers.get("Docker-Content-Digest") or ""
        if is_digest(digest):
            return digest
        found = self.manifest(repository, reference)  # a registry that does not say: the bytes will
        return None if found is None else found.digest

    def manifest(self, repository: str, reference: str) -> ManifestBody | None:
        """The manifest `reference` names, hashed (by digest: it must hash to it); None where there is none."""
        response = self._request("GET", repository, f"/v2/{repository}/manifests/{reference}",
                                 headers={"Accept": ACCEPT}, limit=MANIFEST_LIMIT)
        if response.status_code == 404:
            return None
        self._expect(response, 200, repository, f"GET manifest {reference}")
        body = ManifestBody(response.content, digest_of(response.content),
                            media_type_of(response.content, response.headers.get("Content-Type")))
        if is_digest(reference) and body.digest != reference:
            raise DigestMismatch(f"{self.registry}/{repository}: manifest {reference} was served as bytes hashing "
                                 f"to {body.digest}")
        return body

    def put_manifest(self, repository: str, reference: str, body: ManifestBody) -> bool:
        """`body` put under `reference` (its digest, or a tag); whether the registry read its `subject`
        (OCI-Subject), so that the referrers API lists it."""
        if not body.media_type:
            raise RegistryError(f"manifest {body.digest} declares no media type, and none was served with it")
        response = self._request("PUT", repository, f"/v2/{repository}/manifests/{reference}",
                                 headers={"Content-Type": body.media_type}, data=body.data)
        self._expect(response, 201, repository, f"put manifest {body.digest} as {reference}")
        self._check_digest(response, repository, body.digest, "manifest")
        return "OCI-Subject" in response.headers

    def _upload(self, response: Response, repository: str) -> Upload:
        location = response.headers.get("Location")
        if not location:
            raise RegistryError(f"{self.registry}/{repository}: an upload answer without a Location")
        least = response.headers.get("OCI-Chunk-Min-Length") or ""
        return Upload(follow(response.url, location), 0, int(least) if _DECIMAL.fullmatch(least) else 0)

    def _request(self, method: str, repository: str, path: str = "", *, url: str | None = None,
                 headers: dict[str, str] | None = None, data: bytes | None = None, scope: str | None = None,
                 limit: int = MANIFEST_LIMIT) -> Response:
        return self._transport.request(method, path, scope=scope or self.scope(repository), url=url,
                                       headers=headers, data=data, limit=limit)

    def _expect(self, response: Response, status: int, repository: str, what: str) -> None:
        if response.status_code == status:
            return
        where = f"{self.registry}/{repository}: {what}"
        if response.status_code in (401, 403):
            who = self._transport.identity()
            raise RegistryError(f"{where}: access denied ({response.status_code}) to {who}; "
                                f"{'pushing' if 'push' in self._actions else 'reading'} needs credentials allowed to "
                                "(docker login, or ~/.docker/config.json)")
        raise RegistryError(f"{where}: answered {response.status_code} {shown(response.reason or '')}")

    def _check_digest(self, response: Response, repository: str, digest: str, what: str) -> None:
        said = response.headers.get("Docker-Content-Digest")
        if said is not None and said != digest:
            raise DigestMismatch(f"{self.registry}/{repository}: the {what} {digest} was stored as "
                                 f"{shown(said)}")


class BlobReader:
    """One blob of `repository` read a byte range at a time, from the registry or the CDN it redirects to."""

    def __init__(self, transport: Transport, repository: str, digest: str) -> None:
        self._transport = transport
        self._where = f"{transport.registry}/{repository}"
        self._path = f"/v2/{repository}/blobs/{digest}"
        self._scope = f"repository:{repository}:pull"
        self._digest = digest
        self._url: str | None = None  # where the bytes came from last (a CDN the registry redirected to)

    def read(self, start: int, end: int) -> bytes:
        """Bytes [start, end) of the blob."""
        response = self._get(start, end)
        if self._url is not None and response.status_code in (401, 403, 404, 410):
            self._url = None  # the CDN's address has expired: ask the registry again
            response = self._get(start, end)
        wanted = end - start
        if response.status_code == 206:
            said = (response.headers.get("Content-Range") or "").strip()
            if not said.startswith(f"bytes {start}-{end - 1}/") or len(response.content) != wanted:
                raise RegistryError(f"{self._where}: blob {self._digest}: asked for bytes {start}-{end - 1}, "
                                    f"sent {len(response.content)} bytes as {shown(said)!r}")
        elif response.status_code != 200 or start != 0 or len(response.content) != wanted:
            raise RegistryError(f"{self._where}: blob {self._digest}: bytes {start}-{end - 1} answered "
                                f"{response.status_code} {shown(response.reason or '')} with "
                                f"{len(response.content)} bytes")
        self._url = response.url
        return response.content

    def _get(self, start: int, end: int) -> Response:
        try:
            return self._transport.request("GET", self._path, scope=self._scope, url=self._url,
                                           headers={"Range": f"bytes={start}-{end - 1}"}, limit=end - start)
        except BodyTooLarge:
            raise RegistryError(f"{self._where}: blob {self._digest} was sent whole where a byte range was "
                                "asked: pinguard reads blobs only from registries that serve byte ranges") from None
