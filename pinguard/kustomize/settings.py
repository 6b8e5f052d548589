"""What the policy and the command line say about kustomize: which binary builds kustomizations."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")  # what kustomize looks for in a folder


@dataclass(frozen=True)
class KustomizeSettings:
    binary: str | None = None  # `--kustomize PATH` or the policy's `kustomize.binary`; None: kubectl, else kustomize
    cache_dir: Path | None = None  # where builds are kept between runs
