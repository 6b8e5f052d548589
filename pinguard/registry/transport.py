"""One registry's HTTP: keep-alive connections, pacing, auth, retries, redirects, TLS policy."""
from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlsplit

from pinguard.errors import RegistryError
from pinguard.registry.auth import Authenticator, TokenCache
from pinguard.registry.bodies import connect, fetch, follow
from pinguard.registry.cache import RegistryCache
from pinguard.registry.challenge import Challenge, parse_challenges
from pinguard.registry.credentials import Credentials
from pinguard.registry.pacer import Deadline, Pacer, retry_after
from pinguard.registry.settings import CONTENT_LIMIT, RegistrySettings
from pinguard.registry.wire import ConnectFailed, Dropped, Pool, Response, TLSFailed, WireError
from pinguard.untrusted_text import shown

log = logging.getLogger("pinguard.registry")

_RETRY_STATUSES = frozenset({500, 502, 503, 504})  # 429 is the pacer's: a wait, not a failed attempt
_MAX_REDIRECTS = 5


class Transport:
    """Requests to one registry (or the mirror standing in for it)."""

    def __init__(
        self,
        registry: str,
        settings: RegistrySettings,
        tokens: TokenCache,
        credentials: Callable[[str], Credentials | None],
        cache: RegistryCache,
        deadline: Deadline,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.registry = registry
        self._settings = settings
        self._sleep = sleep
        self._deadline = deadline
        self._base = settings.base_url(registry)
        # Like docker, a loopback or insecure registry named directly may speak plain HTTP.
        self._may_downgrade = registry not in settings.mirrors and settings.allows_plain_http(registry)
        self._netloc = urlsplit(self._base).netloc
        self._plain_http_allowed = settings.allows_plain_http(self._netloc)
        self._pool = Pool(max_idle=max(settings.workers, 1))  # no proxy or netrc from the environment applies
        self._auth = Authenticator(registry, self._pool, settings, tokens,
                                   lambda: _mirror_credentials(settings, registry) or credentials(self._netloc),
                                   self.exchange, deadline)
        self.pacer = Pacer(registry, settings.quota(registry, self.identity), deadline,
                           settings.workers, sleep=sleep)
        log.debug("%s: %s", registry, self.pacer.describe())
        self._cache = cache
        self._auth.challenge = cache.challenge(self._base)
        # Until the challenge (or that there is none, and, for a registry that may speak plain HTTP,
        # the scheme) is known, one request learns it while the others wait, instead of each failing alike.
        self._first = threading.Lock()
        self._scheme = threading.Lock()
        known = self._auth.challenge is not None or cache.asks_no_credentials(self._base)
        self._warm = known and not self._may_downgrade

    def identity(self) -> str:
        """Who requests go out as, for messages: "anonymous" or where the credentials came from."""
        return self._auth.identity()

    def expect(self, scopes: Iterable[str]) -> None:
        """Scopes this run will need, so that one token request covers them all."""
        self._auth.expect(scopes)

    def close(self) -> None:
        self._pool.close()

    def request(self, method: str, path: str, *, scope: str, headers: Mapping[str, str] | None = None,
                url: str | None = None, limit: int = CONTENT_LIMIT, data: bytes | None = None) -> Response:
        """Send one request (with `data` as its body), authenticating and retrying as needed; the body of the
        answer, at most `limit` bytes, is read."""
        if not self._warm:
            with self._first:
                if not self._warm:  # re-checked: those that waited go out together once the first has learnt it
                    response = self._request(method, url or self._base + path, scope, headers or {}, limit, data)
                    self._warm = True
                    if self._auth.challenge is None:
                        self._cache.remember_no_credentials_asked(self._base)
                    return response
        return self._request(method, url or self._base + path, scope, headers or {}, limit, data)

    def exchange(self, url: str, send: Callable[[], Response]) -> Response:
        """`send()` paced when `url` is on the registry's own host: the quota is the host's. The connection
        is opened first, so that the request goes out at its turn, not a handshake after it."""
        if urlsplit(url).netloc != self._netloc:
            return send()
        connect(self._pool, url, registry=self.registry, settings=self._settings, deadline=self._deadline)
        return self.pacer.send(send)

    def _request(self, method: str, url: str, scope: str, headers: Mapping[str, str],
                 limit: int, data: bytes | None) -> Response:
        policy = self._settings.retry
        started: float | None = None  # the first failure: the retry budget counts from there
        reauthenticated = False
        attempt = 0
        while True:
            attempt += 1
            auth = self._auth.header(scope)
            try:
                response = self._send(method, url, auth, headers, limit, data)
                reason = f"{response.status_code} {shown(response.reason)}"
            except TLSFailed as exc:
                if self._may_downgrade and url.startswith("https://") and not exc.untrusted:
                    url = self._downgrade(url)
                    attempt -= 1
                    continue
                raise RegistryError(f"{method} {url}: {_describe(exc, self._settings)}") from None
            except (ConnectFailed, Dropped) as exc:
                response, reason = None, _describe(exc, self._settings)
            except WireError as exc:  # an answer no retry mends: a body framed two ways, a URL with no host
                raise RegistryError(f"{method} {url}: {_describe(exc, self._settings)}") from None
            if response is not None and response.status_code == 401 and not reauthenticated:
                challenge = _bearer_or_basic(response.headers.get("Www-Authenticate", ""))
                if challenge is not None:
                    self._auth.learn(challenge, scope, refused=auth)
                    self._cache.remember_challenge(self._base, challenge)
                    reauthenticated = True
                    attempt -= 1  # answering a challenge is not a retry
                    continue
            if response is not None and response.status_code not in _RETRY_STATUSES:
                return response
            delay = _backoff(attempt, policy.base_delay, policy.max_delay, response)
            started = time.monotonic() if started is None else started
            spent = time.monotonic() - started
            if attempt >= policy.attempts or spent + delay > policy.budget:
                raise RegistryError(f"{method} {url}: {reason} (gave up after {attempt} attempts, {spent:.1f} s)")
            if time.monotonic() + delay > self._deadline.at:
                raise self._deadline.passed(self.registry, f"before {method} {url} could be tried again ({reason})")
            log.debug("%s %s: %s; retrying in %.2f s", method, url, reason, delay)
            self._sleep(delay)

    def _downgrade(self, url: str) -> str:
        """Plain HTTP from now on, decided once for every thread (a loopback registry named directly)."""
        with self._scheme:
            if self._base.startswith("https://"):
                log.debug("%s does not speak TLS; using plain HTTP", self.registry)
                self._base = "http://" + self._base.removeprefix("https://")
        return "http://" + url.removeprefix("https://")

    def _send(self, method: str, url: str, auth: str | None, headers: Mapping[str, str], limit: int,
              data: bytes | None) -> Response:
        """One exchange, following redirects by hand so credentials never leave the registry's host."""
        home = self._netloc  # a redirect or a next-page link elsewhere gets no credentials
        for _ in range(_MAX_REDIRECTS + 1):
            netloc = urlsplit(url).netloc
            sent = dict(headers)
            if auth and netloc == home:
                sent["Authorization"] = auth
            url = self._check_scheme(url)
            begin = time.monotonic()
            response = self.exchange(url, functools.partial(self._exchange_once, method, url, sent, limit, data))
            if log.isEnabledFor(logging.DEBUG):
                log.debug("%s %s -> %d (%.0f ms)", method, url, response.status_code,
                          (time.monotonic() - begin) * 1000)
            if response.status_code not in (301, 302, 303, 307, 308) or "Location" not in response.headers:
                return response
            url = follow(url, response.headers["Location"])
            if response.status_code == 303:
                method, data = "GET", None
        raise RegistryError(f"{url}: more than {_MAX_REDIRECTS} redirects")

    def _exchange_once(self, method: str, url: str, headers: Mapping[str, str], limit: int,
                       data: bytes | None) -> Response:
        return fetch(self._pool, method, url, registry=self.registry, settings=self._settings,
                     deadline=self._deadline, limit=limit, headers=headers, data=data)

    def _check_scheme(self, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme == "http" and not self._allows_plain_http(parts.netloc):
            raise RegistryError(f"refusing plain HTTP to {parts.netloc} ({url}): only loopback addresses and "
                                "--insecure-registry hosts may be reached without TLS")
        if parts.scheme not in ("http", "https"):
            raise RegistryError(f"refusing to follow {url}: not an http(s) URL")
        return url

    def _allows_plain_http(self, netloc: str) -> bool:
        return self._plain_http_allowed if netloc == self._netloc else self._settings.allows_plain_http(netloc)


def _mirror_credentials(settings: RegistrySettings, registry: str) -> Credentials | None:
    """The credentials written into the URL of the mirror standing in for `registry`, if any."""
    found = settings.mirror_credentials.get(registry)
    return Credentials(found[0], found[1], "the mirror's URL") if found else None


def _bearer_or_basic(header: str) -> Challenge | None:
    for challenge in parse_challenges(header):
        if challenge.scheme in ("bearer", "basic"):
            return challenge
    return None


def _backoff(attempt: int, base: float, cap: float, response: Response | None) -> float:
    """Retry-After when the registry gives one, else exponential backoff with full jitter."""
    if response is not None:
        after = retry_after(response.headers.get("Retry-After"))
        if after is not None:
            return after
    return random.uniform(0, min(cap, base * 2 ** (attempt - 1)))


def _describe(exc: WireError, settings: RegistrySettings) -> str:
    if isinstance(exc, TLSFailed):
        if exc.untrusted:
            return f"TLS certificate not trusted (checked against {settings.ca_file or 'the system CA bundle'})"
        return "TLS handshake failed"
    if isinstance(exc, ConnectFailed) and exc.timed_out:
        return f"connect timed out after {settings.connect_timeout:g} s"
    if isinstance(exc, Dropped) and exc.timed_out:
        return f"no answer within {settings.read_timeout:g} s"
    if isinstance(exc, ConnectFailed | Dropped):
        return "connection failed or dropped"
    return f"{type(exc).__name__}: {shown(str(exc))}"

