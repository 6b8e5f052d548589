"""One registry's HTTP: a keep-alive session, pacing, auth, retries, redirects, TLS policy."""
from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlsplit

import requests
import urllib3

from pinguard import __version__
from pinguard.errors import RegistryError
from pinguard.findings import shown
from pinguard.registry.auth import Authenticator, TokenCache
from pinguard.registry.bodies import fetch, follow
from pinguard.registry.cache import RegistryCache
from pinguard.registry.challenge import Challenge, parse_challenges
from pinguard.registry.credentials import Credentials
from pinguard.registry.cutoff import GuardedAdapter
from pinguard.registry.pacer import Deadline, Pacer, retry_after
from pinguard.registry.settings import CONTENT_LIMIT, RegistrySettings

log = logging.getLogger("pinguard.registry")

_RETRY_STATUSES = frozenset({500, 502, 503, 504})  # 429 is the pacer's: a wait, not a failed attempt
_MAX_REDIRECTS = 5
_USER_AGENT = f"pinguard/{__version__}"


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
        self._session = requests.Session()
        self._session.trust_env = False  # proxies and netrc would leak or reroute registry traffic
        adapter = GuardedAdapter(pool_connections=1, pool_maxsize=max(settings.workers, 1), max_retries=0)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        if settings.insecure:
            # The user named these hosts insecure; urllib3 would warn on every request to them.
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self._auth = Authenticator(registry, self._session, settings, tokens,
                                   lambda: _mirror_credentials(settings, registry) or credentials(self._netloc),
                                   self.exchange, deadline)
        self.pacer = Pacer(registry, settings.quota(registry, self.identity), deadline,
                           settings.workers, sleep=sleep)
        log.debug("%s: %s", registry, self.pacer.describe())
        self._cache = cache
        self._auth.challenge = cache.challenge(self._base)
        # Until the challenge (and, for a registry that may speak plain HTTP, the scheme) is
        # known, one request learns it while the others wait, instead of each failing alike.
        self._first = threading.Lock()
        self._scheme = threading.Lock()
        self._warm = self._auth.challenge is not None and not self._may_downgrade

    def identity(self) -> str:
        """Who requests go out as, for messages: "anonymous" or where the credentials came from."""
        return self._auth.identity()

    def expect(self, scopes: Iterable[str]) -> None:
        """Scopes this run will need, so that one token request covers them all."""
        self._auth.expect(scopes)

    def close(self) -> None:
        self._session.close()

    def request(self, method: str, path: str, *, scope: str, headers: Mapping[str, str] | None = None,
                url: str | None = None, limit: int = CONTENT_LIMIT) -> requests.Response:
        """Send one request, authenticating and retrying as needed; the body, at most `limit` bytes, is read."""
        if not self._warm:
            with self._first:
                if not self._warm:  # those that waited go out together once the first has learnt it
                    response = self._request(method, url or self._base + path, scope, headers or {}, limit)
                    self._warm = True
                    return response
        return self._request(method, url or self._base + path, scope, headers or {}, limit)

    def exchange(self, url: str, send: Callable[[], requests.Response]) -> requests.Response:
        """`send()` paced when `url` is on the registry's own host: the quota is the host's."""
        return self.pacer.send(send) if urlsplit(url).netloc == self._netloc else send()

    def _request(self, method: str, url: str, scope: str, headers: Mapping[str, str],
                 limit: int) -> requests.Response:
        policy = self._settings.retry
        started: float | None = None  # the first failure: the retry budget counts from there
        reauthenticated = False
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._send(method, url, scope, headers, limit)
                reason = f"{response.status_code} {shown(response.reason or '')}"
            except requests.exceptions.SSLError as exc:
                if self._may_downgrade and url.startswith("https://") and "CERTIFICATE_VERIFY_FAILED" not in str(exc):
                    url = self._downgrade(url)
                    attempt -= 1
                    continue
                raise RegistryError(f"{method} {url}: {_describe(exc, self._settings)}") from None
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as exc:
                response, reason = None, _describe(exc, self._settings)
            except requests.RequestException as exc:  # an answer no retry mends: a bad header, a URL with no host
                raise RegistryError(f"{method} {url}: {_describe(exc, self._settings)}") from None
            if response is not None and response.status_code == 401 and not reauthenticated:
                challenge = _bearer_or_basic(response.headers.get("Www-Authenticate", ""))
                if challenge is not None:
                    self._auth.learn(challenge, scope)
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

    def _send(self, method: str, url: str, scope: str, headers: Mapping[str, str], limit: int) -> requests.Response:
        """One exchange, following redirects by hand so credentials never leave the registry's host."""
        auth = self._auth.header(scope)
        home = self._netloc  # a redirect or a next-page link elsewhere gets no credentials
        for _ in range(_MAX_REDIRECTS + 1):
            netloc = urlsplit(url).netloc
            sent = {"User-Agent": _USER_AGENT, **headers}
            if auth and netloc == home:
                sent["Authorization"] = auth
            url = self._check_scheme(url)
            begin = time.monotonic()
            response = self.exchange(url, functools.partial(self._exchange_once, method, url, sent, limit))
            log.debug("%s %s -> %d (%.0f ms)", method, url, response.status_code, (time.monotonic() - begin) * 1000)
            if response.status_code not in (301, 302, 303, 307, 308) or "Location" not in response.headers:
                return response
            url = follow(url, response.headers["Location"])
            if response.status_code == 303:
                method = "GET"
        raise RegistryError(f"{url}: more than {_MAX_REDIRECTS} redirects")

    def _exchange_once(self, method: str, url: str, headers: Mapping[str, str], limit: int) -> requests.Response:
        return fetch(self._session, method, url, registry=self.registry, settings=self._settings,
                     deadline=self._deadline, limit=limit, headers=headers)

    def _check_scheme(self, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme == "http" and not self._settings.allows_plain_http(parts.netloc):
            raise RegistryError(f"refusing plain HTTP to {parts.netloc} ({url}): only loopback addresses and "
                                "--insecure-registry hosts may be reached without TLS")
        if parts.scheme not in ("http", "https"):
            raise RegistryError(f"refusing to follow {url}: not an http(s) URL")
        return url


def _mirror_credentials(settings: RegistrySettings, registry: str) -> Credentials | None:
    """The credentials written into the URL of the mirror standing in for `registry`, if any."""
    found = settings.mirror_credentials.get(registry)
    return Credentials(found[0], found[1], "the mirror's URL") if found else None


def _bearer_or_basic(header: str) -> Challenge | None:
    for challenge in parse_challenges(header):
        if challenge.scheme in ("bearer", "basic"):
            return challenge
    return None


def _backoff(attempt: int, base: float, cap: float, response: requests.Response | None) -> float:
    """Retry-After when the registry gives one, else exponential backoff with full jitter."""
    if response is not None:
        after = retry_after(response.headers.get("Retry-After"))
        if after is not None:
            return after
    return random.uniform(0, min(cap, base * 2 ** (attempt - 1)))


def _describe(exc: Exception, settings: RegistrySettings) -> str:
    if isinstance(exc, requests.exceptions.SSLError):
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):
            return f"TLS certificate not trusted (checked against {settings.ca_file or 'the system CA bundle'})"
        return "TLS handshake failed"
    if isinstance(exc, requests.ConnectTimeout):
        return f"connect timed out after {settings.connect_timeout:g} s"
    if isinstance(exc, requests.ReadTimeout):
        return f"no answer within {settings.read_timeout:g} s"
    if isinstance(exc, requests.ConnectionError):
        return "connection failed or dropped"
    return type(exc).__name__

