"""Builds of kustomizations, each made once per run and kept between runs.

A build is named by the hash of the kustomize version and every file below each
kustomization folder it reaches: kustomize loads files only from inside those
folders (`LoadRestrictionsRootOnly`), so an edit to anything it reads is a miss,
never a stale answer. A tree too large to hash is built every time. A build with
edits (to confirm a pin) is made from a copy of those folders, the edits in it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from pinguard.kustomize.binary import BuildFailed, Kustomize
from pinguard.write.kept import KeptTexts, tree_hash


class Builder:
    def __init__(self, kustomize: Kustomize, cache_dir: Path | None, env: Mapping[str, str]) -> None:
        self.kustomize = kustomize
        self._kept = KeptTexts(cache_dir / "kustomize" if cache_dir is not None else None)
        self._env = env

    def build(self, top: Path, folders: Sequence[Path], edited: Mapping[Path, str] | None = None) -> str:
        """What the kustomization `top` builds to; `folders`: every kustomization folder it reaches (resolved);
        `edited`: new texts of files below them (by resolved path), built from a copy."""
        key = self._key(top, folders, edited or {})
        return self._kept.made(key, lambda: self._build(top, folders, edited or {}), BuildFailed, keep=not edited)

    def _build(self, top: Path, folders: Sequence[Path], edited: Mapping[Path, str]) -> str:
        if not edited:
            return self.kustomize.build(top.parent, self._env)
        base = Path(os.path.commonpath([*folders, *(path.parent for path in edited)]))
        with tempfile.TemporaryDirectory(prefix="pinguard-kustomize-") as copy:
            for folder in folders:
                shutil.copytree(folder, Path(copy, folder.relative_to(base)), dirs_exist_ok=True)
            for path, text in edited.items():
                Path(copy, path.relative_to(base)).write_text(text, encoding="utf-8", newline="")
            return self.kustomize.build(Path(copy, top.parent.relative_to(base)), self._env)

    def _key(self, top: Path, folders: Sequence[Path], edited: Mapping[Path, str]) -> str | None:
        digest = hashlib.sha256(f"{self.kustomize.version}\0{top}".encode())
        for folder in sorted(folders):
            tree = tree_hash(folder)
            if tree is None:
                return None  # too large to hash: built every time
            digest.update(f"\0{folder}\0{tree}".encode())
        for path, text in sorted(edited.items()):
            digest.update(f"\0edit\0{path}\0".encode() + hashlib.sha256(text.encode()).digest())
        return digest.hexdigest()
