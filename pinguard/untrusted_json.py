"""JSON from a source pinguard does not control: a registry, a token server, a committed file.

Python's decoder recurses once per nesting level, so a document nested a few thousand
levels deep raises RecursionError; that and every other way the bytes can fail to be
JSON become one `ValueError` the caller turns into its own message.
"""
from __future__ import annotations

import json
from typing import Any


def loads(data: bytes | str) -> Any:
    """The decoded document; ValueError (with a short reason) for anything that is not JSON a person wrote."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
