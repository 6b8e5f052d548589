"""How pinguard reaches registries: mirrors, TLS, timeouts and retries."""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit, urlunsplit

from pinguard.errors import PinguardError

# Bodies are read whole, so each kind has a size cap.
MANIFEST_LIMIT = 4 * 1024 * 1024  # the OCI distribution spec's suggested maximum for manifests
CONTENT_LIMIT = 16 * 1024 * 1024  # config blobs and pages of tags
TOKEN_LIMIT = 256 * 1024  # a token answer is a few kilobytes

ECR_PUBLIC = "public.ecr.aws"
# Pulls per second per address, not adjustable (ECR Public service quotas); every request counts.
ECR_PUBLIC_ANONYMOUS_RATE = 1.0
ECR_PUBLIC_AUTHENTICATED_RATE = 10.0


@dataclass(frozen=True)
class Quota:
    """The rate a registry is asked at, and why."""

    rate: float | None  # requests per second; None: not held back until a 429
    source: str = ""  # "anonymous", "credentials from AWS ecr-public", "--rate or policy"
    hint: str = ""  # how the user could raise it

    def describe(self, rate: float | None) -> str:
        if rate is None:
            return "not held back"
        why = f" ({self.source}: {self.hint})" if self.hint else f" ({self.source})" if self.source else ""
        lowered = f", lowered from {format_rate(self.rate)} after 429s" if self.rate and rate < self.rate else ""
        return f"held to {format_rate(rate)} request/s{lowered}{why}"


def format_rate(rate: float | None) -> str:
    return "unlimited" if rate is None else f"{round(rate, 2):g}"


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # tries in all, the first included
    base_delay: float = 0.5  # seconds before the first retry, doubled each time, with full jitter
    max_delay: float = 10.0
    budget: float = 60.0  # no request keeps retrying 5xx and dropped connections past this many seconds


@dataclass(frozen=True)
class RegistrySettings:
    mirrors: Mapping[str, str] = field(default_factory=dict)  # canonical registry -> base URL
    insecure: frozenset[str] = frozenset()  # hosts reached over plain HTTP or unverified TLS
    ca_file: str | None = None
    connect_timeout: float = 5.0
    read_timeout: float = 30.0
    retry: RetryPolicy = RetryPolicy()
    workers: int = 8
    env: Mapping[str, str] = field(default_factory=dict)
    rates: Mapping[str, float] = field(default_factory=dict)  # canonical registry -> requests per second
    timeout: float = 600.0  # the whole run's deadline, in seconds
    max_manifest_bytes: int = MANIFEST_LIMIT
    mirror_credentials: Mapping[str, tuple[str, str]] = field(default_factory=dict, repr=False)  # from URLs

    def quota(self, registry: str, identity: Callable[[], str]) -> Quota:
        """The rate `registry` is asked at: as configured, else ECR Public's published quota, else none.

        The rate follows the registry's name, mirrored or not: a mirror standing in for ECR
        Public is held to ECR Public's quota unless --rate or the policy says otherwise.
        """
        if registry in self.rates:
            return Quota(self.rates[registry], "--rate or policy")
        if registry == ECR_PUBLIC:
            who = identity()
            if who == "anonymous":
                return Quota(ECR_PUBLIC_ANONYMOUS_RATE, who,
                             f"AWS credentials raise ECR Public's quota to {ECR_PUBLIC_AUTHENTICATED_RATE:g}/s")
            return Quota(ECR_PUBLIC_AUTHENTICATED_RATE, who)
        return Quota(None)

    def base_url(self, registry: str) -> str:
        """Where requests for `registry` go; plain HTTP only to loopback or insecure hosts."""
        url = self.mirrors.get(registry)
        if url is None:
            return f"https://{'registry-1.docker.io' if registry == 'docker.io' else registry}"
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise PinguardError(f"mirror for {registry}: {url!r} is not an http(s) URL")
        if parts.scheme == "http" and not self.allows_plain_http(parts.netloc):
            raise PinguardError(
                f"mirror for {registry}: refusing plain HTTP to {parts.netloc}, which is not a loopback "
                f"address; use https or pass --insecure-registry {parts.netloc}"
            )
        return url.rstrip("/")

    def allows_plain_http(self, netloc: str) -> bool:
        host = hostname(netloc)
        return is_loopback(host) or netloc in self.insecure or host in self.insecure

    def verify_tls(self, netloc: str) -> bool | str:
        if netloc in self.insecure or hostname(netloc) in self.insecure:
            return False
        return self.ca_file or True


def hostname(netloc: str) -> str:
    """The host part of HOST[:PORT], with IPv6 brackets removed."""
    if netloc.startswith("["):
        return netloc[1:].partition("]")[0]
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    import ipaddress  # costs every command's start-up when imported with this module, and only a few need it

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_mirrors(values: list[str], env_value: str | None) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """`REGISTRY=URL` pairs from --mirror flags and PINGUARD_MIRRORS (flags win).

    A user name and password in a URL (`https://alice:secret@host`) are taken out of it:
    they are that mirror's credentials, sent as Basic auth, and never printed.
    """
    pairs = [item for item in (env_value or "").split(",") if item.strip()] + values
    mirrors: dict[str, str] = {}
    credentials: dict[str, tuple[str, str]] = {}
    for pair in pairs:
        registry, sep, url = pair.strip().partition("=")
        if not sep or not registry or not url:
            raise PinguardError(f"invalid mirror {_redacted(pair)!r}: expected REGISTRY=URL")
        if "?" in url or "#" in url:  # neither may be printed (a query may hold a token), nor joined to paths
            raise PinguardError(f"invalid mirror for {registry}: its URL has a query or a fragment ('?' or '#'); "
                                "give it as SCHEME://HOST[:PORT][/PATH], and write them %3F and %23 in a password")
        try:
            parts = urlsplit(url)
            _ = parts.port  # a ValueError when it is no number or past 65535
        except ValueError:
            raise PinguardError(f"invalid mirror {_redacted(pair)!r}: not a URL") from None
        if "@" in parts.netloc:
            userinfo, _, host = parts.netloc.rpartition("@")
            user, _, password = userinfo.partition(":")
            credentials[registry] = (unquote(user), unquote(password))
            url = urlunsplit(parts._replace(netloc=host))
        mirrors[registry] = url
    return mirrors, credentials


def _redacted(text: str) -> str:
    """`text` with anything between "://" and "@" hidden."""
    return re.sub(r"(://)[^/@]*@", r"\1***@", text)


def parse_rates(values: list[str]) -> dict[str, float]:
    """`REGISTRY=N` pairs from --rate: N requests per second, a positive number."""
    rates: dict[str, float] = {}
    for pair in values:
        registry, sep, number = pair.strip().partition("=")
        try:
            rate = float(number)
        except ValueError:
            rate = 0.0
        if not sep or not registry or not rate > 0 or rate == float("inf"):
            raise PinguardError(f"invalid rate {pair!r}: expected REGISTRY=N, N requests per second above 0")
        rates[registry] = rate
    return rates
