"""A target registry that lies, for `pinguard copy` and `verify --copies` to catch: a `LatencyProxy` in front
of a real registry, passing everything through but what its `Lies` say.

- `bare_heads`: every blob HEAD answered 200 with neither Content-Length nor Docker-Content-Digest, the
  registry never asked: a registry that keeps manifests and says yes to every blob.
- `dropped`: the final PUT of a blob upload (`"blob"`: the PUT naming `?digest=`) or a manifest PUT
  (`"manifest"`) answered 201 naming the digest, and nothing stored.
- `swapped`: a blob GET answered with another blob's bytes (digest -> the digest served instead, from the
  same repository); its HEAD is left true, so only hashing the bytes tells.
- `redirected`: a blob GET or HEAD answered 307 to another URL (digest -> where).

`lies` may be changed while the proxy runs, so a test can copy honestly and then turn a lie on.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from testing.proxy import Canned, LatencyProxy

_BLOB = re.compile(r"/v2/(?P<name>.+)/blobs/(?P<digest>[a-z0-9]+:[a-f0-9]+)")
_UPLOAD = re.compile(r"/v2/(?P<name>.+)/blobs/uploads/[^/]+")
_MANIFEST = re.compile(r"/v2/(?P<name>.+)/manifests/(?P<reference>[^/]+)")


@dataclass(frozen=True)
class Lies:
    bare_heads: bool = False
    dropped: frozenset[str] = frozenset()  # "blob", "manifest"
    swapped: Mapping[str, str] = field(default_factory=dict)  # blob digest -> the digest whose bytes a GET gets
    redirected: Mapping[str, str] = field(default_factory=dict)  # blob digest -> the URL its GET and HEAD go to


class LyingProxy(LatencyProxy):
    """A target at `url` (plain HTTP on loopback) in front of the registry at `upstream_url`."""

    def __init__(self, upstream_url: str, lies: Lies | None = None) -> None:
        super().__init__(upstream_url, delay=0)
        self.lies = lies or Lies()

    @property
    def host(self) -> str:
        """The target as a copy names it."""
        return self.url.removeprefix("http://")

    def intercept(self, method: str, path: str, body: bytes) -> Canned | None:
        parts = urlsplit(path)
        lies = self.lies
        blob = _BLOB.fullmatch(parts.path)
        if blob and method in ("GET", "HEAD") and blob["digest"] in lies.redirected:
            return Canned(307, [("Location", lies.redirected[blob["digest"]])])
        if blob and method == "HEAD" and lies.bare_heads:
            return Canned(200)
        upload = _UPLOAD.fullmatch(parts.path)
        digest = parse_qs(parts.query).get("digest", [""])[0]
        if upload and method == "PUT" and digest and "blob" in lies.dropped:
            return _stored(upload["name"], "blobs", digest)
        manifest = _MANIFEST.fullmatch(parts.path)
        if manifest and method == "PUT" and "manifest" in lies.dropped:
            return _stored(manifest["name"], "manifests", "sha256:" + hashlib.sha256(body).hexdigest())
        return None

    def route(self, method: str, path: str) -> str:
        parts = urlsplit(path)
        blob = _BLOB.fullmatch(parts.path)
        if blob and method == "GET" and blob["digest"] in self.lies.swapped:
            return f"/v2/{blob['name']}/blobs/{self.lies.swapped[blob['digest']]}"
        return path


def _stored(name: str, kind: str, digest: str) -> Canned:
    """What a registry answers once it has stored `digest`."""
    return Canned(201, [("Location", f"/v2/{name}/{kind}/{digest}"), ("Docker-Content-Digest", digest)])
