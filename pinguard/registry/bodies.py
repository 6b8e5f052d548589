"""One HTTP exchange within bounds: a hostile or broken server can neither fill memory (a size
cap on the body) nor hold a run, whether it stalls or sends a byte at a time (a time cap on the
headers and one on the body, and the run's deadline over both, kept by a `Cutoff`)."""
from __future__ import annotations

import time
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
import urllib3

from pinguard.errors import RegistryError
from pinguard.registry.cutoff import Cutoff
from pinguard.registry.pacer import Deadline
from pinguard.registry.settings import RegistrySettings


class BodyTooLarge(RegistryError):
    """A body went past its size cap."""


def fetch(session: requests.Session, method: str, url: str, *, registry: str, settings: RegistrySettings,
          deadline: Deadline, limit: int, **sent: Any) -> requests.Response:
    """`method url` through `session`, redirects not followed, its body read whole (at most `limit`
    bytes): the headers within the connect and read timeouts of asking, the body within the read
    timeout of the headers, and all of it by the run's deadline.

    `sent` is passed on to `session.request` (headers, params, data).
    """
    asked = time.monotonic()
    left = deadline.at - asked
    if left <= 0:
        raise deadline.passed(registry, "first")
    response: requests.Response | None = None
    headers_by = min(deadline.at, asked + settings.connect_timeout + settings.read_timeout)
    with Cutoff(headers_by) as cutoff:
        try:
            # The connect timeout is the one limit that holds before there is a socket to cut.
            response = session.request(method, url, allow_redirects=False, stream=True,
                                       timeout=(min(settings.connect_timeout, left), settings.read_timeout),
                                       verify=settings.verify_tls(urlsplit(url).netloc), **sent)
            cutoff.move(min(deadline.at, time.monotonic() + settings.read_timeout))
            read_body(response, limit)
        except requests.RequestException:
            if not cutoff.fired:
                raise
        except ValueError:  # requests parses a redirect's Location even when not asked to follow it
            raise RegistryError(f"{url[:200]}: the answer points to something that is not a URL") from None
    if not cutoff.fired:
        assert response is not None
        return response
    if response is not None:
        response.close()  # a body cut short is never taken for the whole of it
    if cutoff.until >= deadline.at:
        raise deadline.passed(registry, f"while {urlsplit(url).netloc} was still answering")
    if cutoff.until == headers_by:  # cut headers may still have parsed, as if they had ended there
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


def read_body(response: requests.Response, limit: int) -> bytes:
    """The whole body, at most `limit` bytes; it is also set as the response's content."""
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            chunk = _read_some(response)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise BodyTooLarge(f"{response.url}: response larger than {limit} bytes")
            chunks.append(chunk)
    except RegistryError:
        response.close()
        raise
    response._content = b"".join(chunks)
    return response._content


def _read_some(response: requests.Response) -> bytes:
    """What has arrived (at least a byte), instead of waiting for a full buffer as read() does;
    urllib3's errors become the requests errors callers retry on, as iter_content would raise them."""
    try:
        return response.raw.read1(65536, decode_content=True)
    except urllib3.exceptions.ProtocolError as exc:
        raise requests.exceptions.ChunkedEncodingError(exc) from None
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise requests.exceptions.ConnectionError(exc) from None
    except urllib3.exceptions.SSLError as exc:
        raise requests.exceptions.SSLError(exc) from None
    except urllib3.exceptions.DecodeError as exc:
        raise requests.exceptions.ContentDecodingError(exc) from None
