"""One HTTP exchange within bounds: a hostile or broken server can neither fill memory (a size
cap on the body) nor hold a run, whether it stalls or sends a byte at a time (a time cap on the
headers and one on the body, and the run's deadline over both, kept by a `Cutoff`)."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TypeVar
from urllib.parse import urljoin, urlsplit

from pinguard import __version__
from pinguard.errors import RegistryError
from pinguard.registry.cutoff import Cutoff
from pinguard.registry.pacer import Deadline
from pinguard.registry.settings import RegistrySettings
from pinguard.registry.wire import Pool, Response, TooLarge, WireError

USER_AGENT = f"pinguard/{__version__}"
_T = TypeVar("_T")


class BodyTooLarge(RegistryError):
    """A body went past its size cap."""


def fetch(pool: Pool, method: str, url: str, *, registry: str, settings: RegistrySettings, deadline: Deadline,
          limit: int, headers: Mapping[str, str], data: bytes | None = None) -> Response:
    """`method url` (with `data` as its body) through `pool`, redirects not followed, its body read whole
    (at most `limit` bytes): the headers within the connect and read timeouts of asking, the body within
    the read timeout of the headers, and all of it by the run's deadline."""
    def request(cutoff: Cutoff, connect_timeout: float) -> Response:
        return pool.request(method, url, {"User-Agent": USER_AGENT, **headers}, data, limit=limit,
                            connect_timeout=connect_timeout, read_timeout=settings.read_timeout,
                            verify=settings.verify_tls(urlsplit(url).netloc), watch=cutoff)

    try:
        return _bounded(request, url, registry, settings, deadline)
    except TooLarge:
        raise BodyTooLarge(f"{url[:200]}: response larger than {limit} bytes") from None


def connect(pool: Pool, url: str, *, registry: str, settings: RegistrySettings, deadline: Deadline) -> None:
    """A connection to `url`'s host made ready (unless one is idle), within the same bounds as an exchange:
    a request paced to its turn then goes out at its turn, not a handshake later."""
    verify = settings.verify_tls(urlsplit(url).netloc)
    if not pool.has_idle(url, verify):
        _bounded(lambda cutoff, connect_timeout: pool.open(url, connect_timeout=connect_timeout,
                                                           read_timeout=settings.read_timeout, verify=verify,
                                                           watch=cutoff),
                 url, registry, settings, deadline)


def _bounded(work: Callable[[Cutoff, float], _T], url: str, registry: str, settings: RegistrySettings,
             deadline: Deadline) -> _T:
    """`work(cutoff, connect_timeout)` under a cutoff, and what its firing means said as a RegistryError."""
    asked = time.monotonic()
    left = deadline.at - asked
    if left <= 0:
        raise deadline.passed(registry, "first")
    headers_by = min(deadline.at, asked + settings.connect_timeout + settings.read_timeout)
    with Cutoff(headers_by, settings.read_timeout, deadline.at) as cutoff:
        try:
            # The connect timeout is the one limit that holds before there is a connection to cut.
            return work(cutoff, min(settings.connect_timeout, left))
        except WireError:
            if not cutoff.fired:
                raise
    if cutoff.until >= deadline.at:
        raise deadline.passed(registry, f"while {urlsplit(url).netloc} was still answering")
    if not cutoff.in_body:  # the headers (or the handshake) were cut short
        seconds = settings.connect_timeout + settings.read_timeout
        raise RegistryError(f"{url[:200]}: no complete answer within {seconds:g} s")
    raise RegistryError(f"{url[:200]}: response still arriving after {settings.read_timeout:g} s")


def follow(base: str, link: str) -> str:
    """`link` (a redirect's Location, a next page) made absolute against `base`; a RegistryError when it is no URL."""
    try:
        url = urljoin(base, link)
        urlsplit(url)  # refuses what urljoin lets through: brackets that are no IPv6 address, a host that is no name
    except ValueError:
        raise RegistryError(f"{base}: the registry pointed to {link[:100]!r}, which is not a URL") from None
    return url
