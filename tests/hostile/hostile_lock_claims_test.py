"""A lockfile edited to contradict itself, offline: every reader of the lock refuses it, naming the entry and field.

A platform map is what the admission export admits, `post-render` pins and `run` gates on; an entry whose map
cannot be true of any image (a single image naming another digest, one digest for two platforms, the index
itself as a platform's image, a platform written twice as runtimes read it, a digest that is none) is refused
before anything is judged by it: exit 2, file:line and the field, and no file written.
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry

NAME, TAG = "ghcr.io/acme/trainer", "1.0"
INDEX, AMD64, ARM64, OTHER = ("sha256:" + c * 64 for c in "abcd")
MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
POD = f"kind: Pod\nspec:\n  containers:\n  - name: train\n    image: {NAME}:{TAG}@{AMD64}\n"
HONEST = lockfile.dumps(Lock().with_entries([LockEntry(NAME, TAG, INDEX, INDEX_TYPE, 100, "other", None,
                                                       "2026-12-01T00:00:00Z",
                                                       {"linux/amd64": AMD64, "linux/arm64": ARM64})]))
PLATFORMS = f'platforms = {{ "linux/amd64" = "{AMD64}", "linux/arm64" = "{ARM64}" }}'

LIES = {
    "a single image naming another digest": (
        [(INDEX_TYPE, MANIFEST_TYPE)], f'platforms."linux/amd64": {AMD64}, but the entry is a single image'),
    "one digest for two platforms": (
        [(PLATFORMS, f'platforms = {{ "linux/amd64" = "{AMD64}", "linux/arm64" = "{AMD64}" }}')],
        f'platforms."linux/arm64": {AMD64} is "linux/amd64"\'s image too'),
    "the index as its own platform image": (
        [(PLATFORMS, f'platforms = {{ "linux/amd64" = "{AMD64}", "linux/arm64" = "{INDEX}" }}')],
        'platforms."linux/arm64": the index\'s own digest'),
    "one platform written twice as runtimes read it": (
        [(PLATFORMS, f'platforms = {{ "linux/amd64" = "{AMD64}", "linux/x86_64" = "{OTHER}" }}')],
        'platforms."linux/x86_64": the same platform as "linux/amd64"'),
    "a platform digest that is none": (
        [(f'"linux/arm64" = "{ARM64}"', '"linux/arm64" = "sha256:eee"')],
        'platforms."linux/arm64": \'sha256:eee\' is not sha256: followed by 64 lowercase hex digits'),
    "a platform that is no platform": (
        [('"linux/arm64"', '"arm64"')], 'platforms."arm64": not OS/ARCH or OS/ARCH/VARIANT'),
    "a media type of no manifest": (
        [(INDEX_TYPE, "text/html")], "media_type: 'text/html' is no image index or manifest"),
}
COMMANDS = {
    "check": ["check", "pod.yaml"],
    "pin": ["pin", "pod.yaml"],
    "post-render": ["post-render"],
    "export": ["export", "admission"],
    "run": ["run", "--dry-run", "pod.yaml"],
    "audit": ["audit"],
}


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), env={"HOME": str(Path.cwd())}, stdout=out, stderr=err,
                  stdin=io.BytesIO(POD.encode()))
    return status, out.getvalue(), err.getvalue()


def test_the_honest_lock_is_read_by_every_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "pinguard.lock").write_text(HONEST)
    for command in ("check", "post-render", "export"):
        status, _, err = _run(*COMMANDS[command])
        assert status == 0, (command, err)


@pytest.mark.parametrize("lie", sorted(LIES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_lock_that_contradicts_itself_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lie: str,
                                                     command: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD)
    edits, said = LIES[lie]
    text = HONEST
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    (tmp_path / "pinguard.lock").write_text(text)
    status, out, err = _run(*COMMANDS[command])
    assert status == 2
    assert f"pinguard.lock:4:1: [[image]] #1 ({NAME}:{TAG}): {said}" in err
    assert "Traceback" not in err and "kind: " not in out
    assert (tmp_path / "pinguard.lock").read_text() == text
    assert (tmp_path / "pod.yaml").read_text() == POD
