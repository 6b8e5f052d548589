"""What an edit left alone: for the tests that check that pinning changes no other byte."""
from __future__ import annotations

from pinguard.write.edits import Edit


def outside(old: str, new: str, edits: list[Edit]) -> tuple[str, str]:
    """`old` without the replaced spans and `new` without the inserted texts: equal when nothing else moved."""
    kept_old: list[str] = []
    kept_new: list[str] = []
    position = shift = 0
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end)):
        kept_old.append(old[position:edit.start])
        kept_new.append(new[position + shift:edit.start + shift])
        assert new[edit.start + shift:edit.start + shift + len(edit.text)] == edit.text
        shift += len(edit.text) - (edit.end - edit.start)
        position = edit.end
    kept_old.append(old[position:])
    kept_new.append(new[position + shift:])
    return "".join(kept_old), "".join(kept_new)
