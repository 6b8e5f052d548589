"""Reading a response body within bounds: a hostile or broken registry can neither fill
memory (a size cap) nor hold a run forever by sending a byte at a time (a time cap on the
whole body, where the socket's read timeout restarts with every byte)."""
from __future__ import annotations

import time

import requests
import urllib3

from pinguard.errors import RegistryError


def read_body(response: requests.Response, limit: int, seconds: float) -> bytes:
    """The whole body, at most `limit` bytes and `seconds` long; it is also set as the response's content."""
    started = time.monotonic()
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            chunk = _read_some(response)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise RegistryError(f"{response.url}: response larger than {limit} bytes")
            if time.monotonic() - started > seconds:
                raise RegistryError(f"{response.url}: response still arriving after {seconds:g} s")
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
