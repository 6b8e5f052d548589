"""Text from files and registries as a message may show it: long words cut, what does not print escaped.

A value quoted from a manifest or a registry's answer may be a megabyte long, or carry
terminal escapes that would rewrite the screen; every message that quotes one passes it
through `shown` (findings do so for every rule and format).
"""
from __future__ import annotations

import re

WORD = 512  # characters of one word a finding shows: the longest image reference fits
MESSAGE = 4096  # characters of a whole message
_LONG_WORD = re.compile(rf"\S{{{WORD + 1},}}")


def shown(text: str, limit: int = MESSAGE) -> str:
    """`text` as a finding may show it: words cut to `WORD` characters, all of it to `limit`, with an
    ellipsis where cut; characters that do not print (controls, terminal escapes, line breaks) escaped.

    Values come from the files checked: a megabyte image string, or one that would rewrite the terminal.
    """
    text = _LONG_WORD.sub(lambda word: word.group()[:WORD] + "…", text)
    return escaped(text[:limit] + "…" if len(text) > limit else text)


def escaped(text: str) -> str:
    """`text` with every character that does not print written as its Python escape (`\\x1b`, `\\n`)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
