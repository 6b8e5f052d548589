"""Quoted values as a message may show them: cut where long, escaped where they do not print."""
from __future__ import annotations

from pinguard.untrusted_text import escaped, shown


def test_what_does_not_print_is_escaped_so_no_value_rewrites_the_terminal() -> None:
    assert escaped("über → später") == "über → später"  # printable, as written
    assert escaped("a\x1b[2Jb\r\n\t") == "a\\x1b[2Jb\\r\\n\\t"
    assert shown("`\x1b]0;owned\x07` has no digest") == "`\\x1b]0;owned\\x07` has no digest"


def test_a_long_value_is_cut_with_an_ellipsis() -> None:
    image = "registry.example/" + "a" * 1000
    assert shown(image) == image[:512] + "…"  # one word: the longest image reference fits in 512
    assert shown(f"`{image}` has no digest") == f"`{image[:511]}… has no digest"
    words = "ab " * 3000
    assert shown(words) == words[:4096] + "…"  # the whole message
    assert shown("short words stay whole") == "short words stay whole"
