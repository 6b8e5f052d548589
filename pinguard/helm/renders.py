"""Renders of a chart's deployments, each made once per run and kept between runs.

A render is named by the hash of everything it depends on: the helm version, every
file of the chart (subcharts and packaged `.tgz` ones included), the values texts,
the `--set` pairs and the cluster the policy names. A kept render is read back only
under that name, so an edit anywhere in the chart is a miss, never a stale answer. A
chart too large to hash (past `tree_hash`'s bounds) is rendered every time.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pinguard.helm.binary import Helm, RenderFailed
from pinguard.helm.settings import Deployment
from pinguard.read.files import TextFile, UnreadableFile
from pinguard.write.kept import KeptTexts, tree_hash


class Renderer:
    def __init__(self, helm: Helm, cache_dir: Path | None, env: Mapping[str, str]) -> None:
        self.helm = helm
        self._kept = KeptTexts(cache_dir / "helm" if cache_dir is not None else None)
        self._env = env
        self._charts: dict[Path, str | None] = {}
        self._read: dict[Path, str] = {}  # values files as read, once a run

    def values_texts(self, deployment: Deployment, edited: Mapping[Path, str] | None = None) -> list[str]:
        """The texts of a deployment's values files, edited ones (by resolved path) as edited."""
        texts = []
        for path in deployment.values:
            if edited is not None and path.resolve() in edited:
                texts.append(edited[path.resolve()])
                continue
            if path not in self._read:
                try:
                    self._read[path] = TextFile.read(path).text
                except UnreadableFile as exc:
                    raise RenderFailed(f"{path}: {exc}") from None
            texts.append(self._read[path])
        return texts

    def render(self, deployment: Deployment, edited: Mapping[Path, str] | None = None, sample: int = 0) -> str:
        """What helm renders for `deployment`, with `edited` texts (by resolved path) in place of their files:
        its values files, and files of the chart itself (a subchart's values), rendered from a copy. `sample`: a
        render made apart from the others of the same input (Helm's random values differ between them)."""
        texts = self.values_texts(deployment, edited)
        given = {path.resolve() for path in deployment.values}
        root = deployment.chart.resolve()
        inside = {path: text for path, text in (edited or {}).items() if path not in given and (
            path == root / "values.yaml" or path.is_relative_to(root / "charts"))}
        key = self._key(deployment, [*texts, *(f"{path}\0{text}" for path, text in sorted(inside.items()))], sample)
        return self._kept.made(key, lambda: self._template(deployment, texts, inside), RenderFailed)

    def _template(self, deployment: Deployment, texts: list[str], inside: Mapping[Path, str]) -> str:
        if not inside:
            return self.helm.template(deployment.chart, texts, deployment.settings, self._env, deployment.context)
        root = deployment.chart.resolve()
        with tempfile.TemporaryDirectory(prefix="pinguard-chart-") as folder:
            copy = Path(folder, root.name)
            shutil.copytree(root, copy)
            for path, text in inside.items():
                (copy / path.relative_to(root)).write_text(text, encoding="utf-8")
            return self.helm.template(copy, texts, deployment.settings, self._env, deployment.context)

    def _key(self, deployment: Deployment, texts: list[str], sample: int) -> str:
        digest = hashlib.sha256(f"{self.helm.version}\0{sample}".encode() if sample else self.helm.version.encode())
        chart = self._chart_hash(deployment.chart)
        digest.update((chart or os.urandom(16).hex()).encode())  # an unhashable chart is never found again
        for text in texts:
            digest.update(b"\0values\0" + hashlib.sha256(text.encode()).digest())
        for name, value in deployment.settings:
            digest.update(f"\0set\0{name}\0{value}".encode())
        if deployment.context is not None:
            release = deployment.context.release or ""
            digest.update("\0context\0".join(("", release, *deployment.context.arguments())).encode())
        return digest.hexdigest()

    def _chart_hash(self, chart: Path) -> str | None:
        if chart not in self._charts:
            self._charts[chart] = tree_hash(chart)
        return self._charts[chart]
