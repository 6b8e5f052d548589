"""What a policy is: the rules it runs with their options, and what it tells the rest of pinguard.

`pinguard.policy.load` builds a `Policy` from policy files, every value checked there; the
sections of the files, typed, are `Layer`s until then.
"""
from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pinguard.copy.ecr import RepositorySettings
from pinguard.errors import InvalidReference
from pinguard.findings import Finding, Problem
from pinguard.helm.settings import HelmSettings
from pinguard.kustomize.settings import KustomizeSettings
from pinguard.lock.settings import WrittenDigest
from pinguard.provenance.trust import Trust
from pinguard.reference import parse
from pinguard.resolve.tags import TagRule, TagRules


class Rule(Protocol):
    """What every rule module declares (`pinguard.policy.rules`)."""

    ID: str
    CONF: dict[str, object]
    DEFAULT: dict[str, object]


_R = TypeVar("_R", bound=Rule)


@dataclass(frozen=True)
class Sidecar:
    """A policy's `sidecars:` entry: containers it lets run though the lock does not vouch for them.

    `name` is a glob on the container's name; `image` a glob on its image without its
    digest, normalised or in Docker's short form (`istio/proxyv2:1.22.0@sha256:…` is
    `docker.io/istio/proxyv2:1.22.0` and `istio/proxyv2:1.22.0`; a bare name is `:latest`),
    or as the pod spec spells it. An entry with both needs both to match.
    """

    name: str | None = None
    image: str | None = None

    def allows(self, container: str, image: str) -> bool:
        return self.allows_name(container) and (self.image is None or any(
            fnmatch.fnmatchcase(spelling, self.image) for spelling in _spellings(image)))

    def allows_name(self, container: str) -> bool:
        return self.name is None or fnmatch.fnmatchcase(container, self.name)

    def __str__(self) -> str:
        fields = {"name": self.name, "image": self.image}
        return "{" + ", ".join(f"{key}: {json.dumps(value)}" for key, value in fields.items() if value) + "}"


def _spellings(image: str) -> list[str]:
    """What a sidecar entry's image glob is matched against: the image as written, and without its digest."""
    try:
        reference = parse(image)
    except InvalidReference:
        return [image]
    tag = reference.tag or (None if reference.digest else "latest")  # what a runtime pulls for a bare name
    return [image, *(f"{name}:{tag}" if tag else name for name in (reference.name, reference.familiar_name))]


@dataclass(frozen=True)
class ProvenanceSection:
    """`provenance:`, each path joined to the folder of the file that names it. None: not set, so a
    file laid over another changes only what it sets (`keys: []` does set: no keys)."""

    lock: bool | None = None
    keys: tuple[Path, ...] | None = None
    trusted_root: Path | None = None
    notation_certs: tuple[Path, ...] | None = None
    notation_authorities: tuple[Path, ...] | None = None  # `notation-signing-authorities`


@dataclass(frozen=True, kw_only=True)
class Layer:
    """What policy files set, before the rules' defaults fill the rest: one file with its `extends`
    folded in, or several laid one over another."""

    rules: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # rule ID -> the options set
    exclude: tuple[str, ...] = ()
    tags: tuple[TagRule, ...] = ()  # first match wins
    rates: Mapping[str, float] = field(default_factory=dict)  # `registries:`: registry -> requests per second
    helm: HelmSettings = field(default_factory=HelmSettings)  # `helm: {binary, charts}`
    kustomize: KustomizeSettings = field(default_factory=KustomizeSettings)  # `kustomize:`
    provenance: ProvenanceSection = field(default_factory=ProvenanceSection)
    sidecars: tuple[Sidecar, ...] = ()
    ecr: Mapping[str, Any] = field(default_factory=dict)  # RepositorySettings' keyword arguments set


@dataclass(frozen=True, kw_only=True)
class Policy:
    rules: Mapping[str, Mapping[str, Any]]  # rule ID -> validated options, `level` included
    exclude: tuple[str, ...] = ()
    tag_rules: TagRules = field(default_factory=TagRules)
    rates: Mapping[str, float] = field(default_factory=dict)  # registry -> requests per second
    helm: HelmSettings = field(default_factory=HelmSettings)  # which helm renders charts, and how they are deployed
    kustomize: KustomizeSettings = field(default_factory=KustomizeSettings)  # which binary builds kustomizations
    trust: Trust = field(default_factory=Trust)  # what signatures are verified against
    lock_provenance: bool = False  # `lock` looks for provenance without --provenance
    sidecars: tuple[Sidecar, ...] = ()  # containers the manifest does not declare that may run unlocked
    ecr: RepositorySettings = field(default_factory=RepositorySettings)  # repositories `copy` creates in ECR

    def enabled(self, rules: Iterable[_R]) -> list[tuple[_R, Mapping[str, Any]]]:
        """Those of `rules` (one TYPE's) this policy has on, in ID order, each with its options."""
        by_id = {rule.ID: rule for rule in rules}
        return [(by_id[rule], conf) for rule, conf in sorted(self.rules.items())
                if conf["level"] != "off" and rule in by_id]

    @property
    def written_digest(self) -> WrittenDigest:
        """What `lock` does with a digest written beside a tag that points elsewhere (tag-digest-mismatch's `lock`)."""
        return WrittenDigest(self.rules["tag-digest-mismatch"]["lock"])

    def excluded(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, pattern) for pattern in self.exclude)

    def finding(self, rule: str, problem: Problem) -> Finding:
        return Finding(problem.file, problem.line, problem.column, rule, str(self.rules[rule]["level"]),
                       problem.message, problem.reference)
