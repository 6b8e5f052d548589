"""Registry authentication driven by the `Www-Authenticate` challenge.

Bearer tokens (Docker's token flow, as ECR Public and Docker Hub use it) are
cached per realm, service and scope until shortly before they expire. A token
request is a request against the quota like any other, so one registry fetches
one token at a time, and the first asks for every scope the run expects to
need (`expect`): one token for all the repositories, not one per repository.
A registry that refuses such a token for one of its scopes is then asked one
scope at a time.
"""
from __future__ import annotations

import base64
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from pinguard import untrusted_json
from pinguard.errors import RegistryError
from pinguard.registry.bodies import fetch, follow
from pinguard.registry.challenge import Challenge
from pinguard.registry.credentials import Credentials
from pinguard.registry.pacer import Deadline
from pinguard.registry.settings import TOKEN_LIMIT, RegistrySettings
from pinguard.registry.wire import Pool, Response, WireError
from pinguard.untrusted_text import shown

log = logging.getLogger("pinguard.registry")

_DEFAULT_TOKEN_LIFETIME = 60.0  # the token spec's default when expires_in is absent
_LONGEST_TOKEN_LIFETIME = 86400.0  # a token said to live longer than a day is treated as if unsaid
_EXPIRY_MARGIN = 10.0
_MAX_SCOPES = 50  # scopes asked for in one token request: keeps its URL short
_MAX_TOKEN_REDIRECTS = 3


@dataclass(frozen=True)
class _Token:
    value: str
    expires: float


class TokenCache:
    """Tokens by (realm, service, scope), shared by every registry of a client."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tokens: dict[tuple[str, str, str], _Token] = {}
        self._guard = threading.Lock()

    def valid(self, key: tuple[str, str, str]) -> str | None:
        with self._guard:
            token = self._tokens.get(key)
        return token.value if token is not None and token.expires > self._clock() else None

    def put(self, key: tuple[str, str, str], value: str, lifetime: float) -> None:
        with self._guard:
            self._tokens[key] = _Token(value, self._clock() + max(lifetime - _EXPIRY_MARGIN, 1.0))

    def forget(self, key: tuple[str, str, str]) -> None:
        with self._guard:
            self._tokens.pop(key, None)


def basic_header(credentials: Credentials) -> str:
    raw = f"{credentials.username}:{credentials.secret}".encode()
    return "Basic " + base64.b64encode(raw).decode()


class Authenticator:
    """The Authorization header for one registry, learnt from its challenge."""

    def __init__(
        self,
        registry: str,
        pool: Pool,
        settings: RegistrySettings,
        tokens: TokenCache,
        credentials: Callable[[], Credentials | None],
        exchange: Callable[[str, Callable[[], Response]], Response],
        deadline: Deadline,
    ) -> None:
        self._registry = registry
        self._exchange = exchange  # paces token requests to the registry's own host (ECR Public's realm)
        self._pool = pool
        self._deadline = deadline
        self._settings = settings
        self._tokens = tokens
        self._lookup = credentials
        self._looked_up = False
        self._found: Credentials | None = None
        self.challenge: Challenge | None = None
        self._expected: dict[str, None] = {}  # scopes the run will need, in order
        self._combine = True  # whether tokens for several scopes are asked for at once
        self._fetching = threading.Lock()

    def expect(self, scopes: Iterable[str]) -> None:
        """Scopes the run will need; the next token request covers them too."""
        with self._fetching:
            self._expected.update(dict.fromkeys(scopes))

    def _credentials(self) -> Credentials | None:
        """Looked up once, when first needed: a credential helper is a process to run."""
        if not self._looked_up:
            self._found = self._lookup()
            self._looked_up = True
        return self._found

    def learn(self, challenge: Challenge, scope: str, refused: str | None) -> None:
        """Remember the challenge of a 401 to a request sent with the Authorization `refused`; the token it
        carried is dropped for `scope`.

        Registries add `error="invalid_token"` or another scope to the challenge when they
        refuse a token, so that token must go whatever the new challenge says. One fetched
        since stays: requests sent with the old token are still being answered 401 after the
        new one came, and dropping it would fetch the same token again for each of them.
        """
        if self.challenge is not None:
            token = self._tokens.valid(self._key(scope))
            if token is not None and refused == f"Bearer {token}":
                self._combine = False  # a token was refused for its scope: ask for each scope alone
                self._tokens.forget(self._key(scope))
        self.challenge = challenge

    def identity(self) -> str:
        credentials = self._credentials()
        return f"credentials from {credentials.source}" if credentials else "anonymous"

    def header(self, scope: str) -> str | None:
        challenge = self.challenge
        if challenge is None:
            return None
        if challenge.scheme == "basic":
            credentials = self._credentials()
            if credentials is None:
                raise RegistryError(f"{self._registry} asks for a user name and password, and none is configured "
                                    "(docker login, or ~/.docker/config.json)")
            return basic_header(credentials)
        if challenge.scheme == "bearer":
            return "Bearer " + self._token(scope)
        raise RegistryError(f"{self._registry} asks for unsupported authentication {challenge.scheme!r}")

    def _key(self, scope: str) -> tuple[str, str, str]:
        assert self.challenge is not None
        return (self.challenge.realm, self.challenge.service, scope)

    def _token(self, scope: str) -> str:
        token = self._tokens.valid(self._key(scope))
        if token is not None:
            return token
        with self._fetching:  # a token request in flight may well bring this scope too
            token = self._tokens.valid(self._key(scope))
            if token is None:
                scopes = [scope]
                if self._combine:
                    scopes += [s for s in self._expected if s != scope and self._tokens.valid(self._key(s)) is None]
                scopes = scopes[:_MAX_SCOPES]
                token, lifetime = self._fetch_token(scopes)
                for each in scopes:
                    self._tokens.put(self._key(each), token, lifetime)
            return token

    def _fetch_token(self, scopes: list[str]) -> tuple[str, float]:
        assert self.challenge is not None
        realm, service = self.challenge.realm, self.challenge.service
        self._check_realm(realm)
        credentials = self._credentials()
        params: dict[str, str | list[str]] = {"service": service, "scope": scopes} if service else {"scope": scopes}
        scope = " ".join(scopes)
        log.debug("token %s scope=%s (%s)", realm, scope, credentials.source if credentials else "anonymous")
        try:
            if credentials is not None and credentials.is_identity_token:
                form = {**params, "grant_type": "refresh_token", "refresh_token": credentials.secret,
                        "client_id": "pinguard"}
                response = self._token_request("POST", realm, form=form, secret=True)
            else:
                headers = {"Authorization": basic_header(credentials)} if credentials else {}
                response = self._token_request("GET", realm, params=params, headers=headers,
                                               secret=credentials is not None)
        except WireError as exc:
            raise RegistryError(f"{self._registry}: token request to {realm} failed: {shown(str(exc))}") from None
        if response.status_code in (401, 403):
            if credentials is None:
                raise RegistryError(f"{self._registry}: anonymous access to {scope} was refused; "
                                    "configure credentials (docker login)")
            raise RegistryError(f"{self._registry}: credentials from {credentials.source} were refused for {scope}")
        if response.status_code != 200:
            raise RegistryError(f"{self._registry}: token request to {realm} answered {response.status_code}")
        return _parse_token(response, self._registry)

    def _check_realm(self, url: str) -> None:
        try:
            netloc = urlsplit(url).netloc
        except ValueError:
            netloc = ""
        plain_allowed = url.startswith("http://") and self._settings.allows_plain_http(netloc)
        if not netloc or (not url.startswith("https://") and not plain_allowed):
            raise RegistryError(f"{self._registry}: refusing token realm {url[:200]!r} "
                                "(only https, or http on loopback)")

    def _token_request(self, method: str, realm: str, *, secret: bool, form: Mapping[str, object] | None = None,
                       params: Mapping[str, str | list[str]] | None = None,
                       headers: Mapping[str, str] | None = None) -> Response:
        """The token endpoint's answer, its body capped; redirects followed by hand, and one that would
        carry a secret (a password, a refresh token) to another host is refused."""
        url = realm
        for _ in range(_MAX_TOKEN_REDIRECTS + 1):
            response = self._exchange(url, functools.partial(self._token_exchange, method, url, form, params, headers))
            location = response.headers.get("Location")
            if response.status_code not in (301, 302, 303, 307, 308) or not location:
                return response
            target = follow(url, location)
            if secret and urlsplit(target).netloc != urlsplit(realm).netloc:
                raise RegistryError(f"{self._registry}: the token endpoint {realm} redirected to another host "
                                    f"({urlsplit(target).netloc}); refusing to send credentials there")
            self._check_realm(target)
            url, params = target, None  # the Location carries its own query
            if response.status_code not in (307, 308):
                method, form = "GET", None
        raise RegistryError(f"{self._registry}: the token endpoint {realm} redirected more than "
                            f"{_MAX_TOKEN_REDIRECTS} times")

    def _token_exchange(self, method: str, url: str, form: Mapping[str, object] | None,
                        params: Mapping[str, str | list[str]] | None,
                        headers: Mapping[str, str] | None) -> Response:
        sent = dict(headers or {})
        if params:
            url += ("&" if urlsplit(url).query else "?") + urlencode(params, doseq=True)
        data = None
        if form is not None:
            data = urlencode(form, doseq=True).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        return fetch(self._pool, method, url, registry=self._registry, settings=self._settings,
                     deadline=self._deadline, limit=TOKEN_LIMIT, headers=sent, data=data)


def _parse_token(response: Response, registry: str) -> tuple[str, float]:
    try:
        body = untrusted_json.loads(response.content)
        token = body.get("token") or body.get("access_token")
        lifetime = float(body.get("expires_in") or _DEFAULT_TOKEN_LIFETIME)
    except (ValueError, AttributeError, TypeError, OverflowError):
        raise RegistryError(f"{registry}: the token endpoint did not answer JSON with a token") from None
    if not isinstance(token, str) or not token:
        raise RegistryError(f"{registry}: the token endpoint answered without a token")
    if not 0 < lifetime <= _LONGEST_TOKEN_LIFETIME:  # NaN, negative or absurd: the default, never forever
        lifetime = _DEFAULT_TOKEN_LIFETIME
    return token, lifetime
