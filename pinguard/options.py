"""Options every command shares, gathered once by the command line."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from pinguard.provenance.model import Trust
from pinguard.registry.manifest import Platform
from pinguard.registry.settings import RegistrySettings
from pinguard.resolve.tags import TagRules
from pinguard.sources.base import SourceSettings

PROJECT_POLICY = Path(".pinguard.yaml")  # the project's own policy, in the folder pinguard runs in


@dataclass(frozen=True)
class Options:
    stdout: TextIO
    stderr: TextIO
    lockfile: Path = Path("pinguard.lock")
    registry: RegistrySettings = field(default_factory=RegistrySettings)
    platforms: tuple[Platform, ...] = (Platform("linux", "amd64"),)
    cache_dir: Path | None = None
    quiet: bool = False
    verbose: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    tag_rules: TagRules = field(default_factory=TagRules)  # from the policy: which tags move
    sources: SourceSettings = field(default_factory=SourceSettings)  # from the policy: how to read files
    provenance: bool = False  # look for provenance, signatures and SBOMs of what is resolved
    trust: Trust = field(default_factory=Trust)  # from the policy: what signatures are verified against
    # from the policy (rule tag-digest-mismatch, option `lock`): what `lock` does with a digest
    # written beside a tag that points elsewhere: "refuse", lock the "tag"'s, or keep the "digest"
    tag_digest_mismatch: str = "refuse"
    helm: str | None = None  # `--helm PATH`: the helm that renders charts, over the policy's

    def sources_over(self, sources: SourceSettings) -> SourceSettings:
        """A policy's settings for reading files, with what the command line says of Helm."""
        helm = replace(sources.helm, binary=self.helm or sources.helm.binary, cache_dir=self.cache_dir)
        return replace(sources, helm=helm)
