"""escaped-reference: a reference written so that pinguard cannot pin it in place is still judged.

A value with escapes (`"\\x65vil.example/tools:latest"`), `!!binary` or folded over lines names the
image a runtime pulls once YAML is decoded, but pinning edits the characters as written,
so `pin` cannot touch it and `lock` does not resolve it. It passes only when what it
decodes to is pinned to the locked digest; otherwise write it as a plain or quoted value.

PASS: `image: "nginx:1.25@sha256:4c0f..."` with that digest locked for `nginx:1.25`
FAIL: `image: "\\x65vil.example/tools:latest"`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.lock.locked import find
from pinguard.policy.rules.common import Conf, Context, at
from pinguard.sources.base import Found

ID = "escaped-reference"
TYPE: Final = "reference"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "error"}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    decoded = found.decoded
    if decoded is None:
        return
    if decoded.digest is not None and find(context.lock, decoded).locked:
        return  # as `post-render`, `run` and the cluster judge it: it runs a digest the lock holds
    yield at(found, f"reads as {decoded}, which pinguard cannot pin as written (escapes, `!!binary` or a folded "
                    "block): write it as a plain or quoted value, then `pinguard pin`")
