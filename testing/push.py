"""Push images over the registry HTTP API, independently of pinguard's own client.

Seeding through a separate implementation means a bug in pinguard's registry
code cannot hide itself by being on both sides of a test.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urljoin

import requests

from testing.images import Blob, Manifest

_CHALLENGE_PARAM = re.compile(r'(\w+)="([^"]*)"')


class PushError(RuntimeError):
    """The registry refused a step of a push."""


def parse_bearer_challenge(header: str) -> dict[str, str] | None:
    """Parameters of a `Bearer realm=..,service=..,scope=..` challenge, or None if not Bearer."""
    scheme, _, params = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return dict(_CHALLENGE_PARAM.findall(params))


class Pusher:
    """Pushes `Manifest` trees (blobs, children, then the manifest itself)."""

    def __init__(
        self,
        base_url: str,
        *,
        ca_file: str | None = None,
        credentials: tuple[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.credentials = credentials
        self._session = requests.Session()
        # Ignore REQUESTS_CA_BUNDLE, proxies and ~/.netrc: with trust_env on, an
        # environment CA bundle silently replaces session.verify.
        self._session.trust_env = False
        self._session.verify = ca_file or True
        # One token per repository, each scoped to pull,push on it.
        self._tokens: dict[str, str] = {}

    def push(self, repository: str, manifest: Manifest, tag: str | None = None) -> str:
        """Push manifest (and everything it needs) under tag, or by digest; returns the digest."""
        for child in manifest.children:
            self.push(repository, child)
        for blob in manifest.blobs:
            self._push_blob(repository, blob)
        reference = tag or manifest.digest
        response = self._request(
            "PUT",
            repository,
            f"/v2/{repository}/manifests/{reference}",
            data=manifest.data,
            headers={"Content-Type": manifest.media_type},
        )
        _expect(response, 201, f"PUT manifest {repository}:{reference}")
        served = response.headers.get("Docker-Content-Digest")
        if served != manifest.digest:
            raise PushError(f"registry stored {served} for {manifest.digest}")
        return manifest.digest

    def _push_blob(self, repository: str, blob: Blob) -> None:
        head = self._request("HEAD", repository, f"/v2/{repository}/blobs/{blob.digest}")
        if head.status_code == 200:
            return
        start = self._request("POST", repository, f"/v2/{repository}/blobs/uploads/")
        _expect(start, 202, f"start upload of {blob.digest}")
        # Location may be relative and already carries the upload state in its query.
        location = urljoin(self.base_url + "/", start.headers["Location"])
        done = self._request(
            "PUT",
            repository,
            location,
            params={"digest": blob.digest},
            data=blob.data,
            headers={"Content-Type": "application/octet-stream"},
        )
        _expect(done, 201, f"finish upload of {blob.digest}")

    def _request(
        self,
        method: str,
        repository: str,
        path_or_url: str,
        *,
        data: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> requests.Response:
        """Send once; on a Bearer 401 fetch a token for the repository and send again."""
        url = path_or_url if "://" in path_or_url else self.base_url + path_or_url

        def send() -> requests.Response:
            sent = dict(headers or {})
            token = self._tokens.get(repository)
            if token:
                sent["Authorization"] = f"Bearer {token}"
            return self._session.request(
                method, url, data=data, headers=sent, params=params, timeout=30
            )

        response = send()
        challenge = parse_bearer_challenge(response.headers.get("Www-Authenticate", ""))
        if response.status_code == 401 and challenge is not None:
            self._tokens[repository] = self._fetch_token(challenge, repository)
            response = send()
        return response

    def _fetch_token(self, challenge: dict[str, str], repository: str) -> str:
        params = {"scope": f"repository:{repository}:pull,push"}
        if "service" in challenge:
            params["service"] = challenge["service"]
        response = self._session.get(
            challenge["realm"], params=params, auth=self.credentials, timeout=30
        )
        _expect(response, 200, f"token for {repository}")
        body = response.json()
        token = body.get("token") or body.get("access_token")
        if not isinstance(token, str):
            raise PushError(f"token server answered without a token: {body}")
        return token


def _expect(response: requests.Response, status: int, what: str) -> None:
    if response.status_code != status:
        raise PushError(
            f"{what}: {response.request.method} {response.url} -> "
            f"{response.status_code} {response.text[:500]}"
        )
