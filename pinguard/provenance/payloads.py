"""Reading hostile bytes: JSON and base64 from registries, each failure an `Unreadable` that says what.

Standard library only: the Sigstore bundle reader uses it without loading `cryptography`.
"""
from __future__ import annotations

import base64
import json

from pinguard.reference import is_digest

MAX_SIGNATURE_BYTES = 1 << 20  # a signed payload or a JWS envelope with its chain is a few kilobytes


class Unreadable(Exception):
    """Bytes that are not the document they are labelled as; the text says why."""


class Unverified(Exception):
    """Why a readable signature does not verify."""


def load_json(data: bytes, what: str) -> object:
    """`data` read as UTF-8 JSON; raises `Unreadable` naming `what`."""
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise Unreadable(f"{what} is nested too deeply") from None
    except ValueError as error:
        raise Unreadable(f"{what} is not JSON: {error}") from None


def member(value: object, *keys: str) -> object:
    """`value[key1][key2]...`, or None where an object or key is missing."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def base64_bytes(text: object, what: str, *, url: bool = False) -> bytes:
    """Standard (or, with `url`, URL-safe) base64, padding optional; raises `Unreadable` naming `what`."""
    if not isinstance(text, str):
        raise Unreadable(f"{what} is not a string")
    if url and ("+" in text or "/" in text):
        raise Unreadable(f"{what} is not base64url")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_" if url else None, validate=True)
    except ValueError:
        raise Unreadable(f"{what} is not base64") from None


def check_size(data: bytes) -> None:
    if len(data) > MAX_SIGNATURE_BYTES:
        raise Unreadable(f"{len(data)} bytes is more than a signature layer may hold ({MAX_SIGNATURE_BYTES})")


def check_signs(claimed: object, subject: str) -> None:
    """A signed payload must name the image it was found for; raises `Unverified` saying what it names."""
    if claimed == subject:
        return
    if isinstance(claimed, str) and is_digest(claimed):
        raise Unverified(f"signs {claimed}, not this image")
    raise Unverified("the signed payload names no image digest")
