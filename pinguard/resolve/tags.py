"""Which tags move: a *moving* tag (`train-ml-cuda-v1.1`, `v2`, `latest`) is re-pointed by
every rebuild; a *frozen* one (`train-ml-cuda-v1.1.0`) is not. Records only: no network.
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from pinguard.errors import PinguardError

if TYPE_CHECKING:
    from packaging.version import Version

# The version at the end of a tag: `...-v1.1`, `v2`, `1.25.3`.
_TRAILING_VERSION = r"(?P<version>v?\d+(?:\.\d+)*)"


class TagKind(StrEnum):
    MOVING = "moving"
    FROZEN = "frozen"
    OTHER = "other"


@dataclass(frozen=True)
class TagRule:
    """How the tags of repositories matching `repository` (a glob on the normalised name) move."""

    repository: str
    moving: re.Pattern[str]
    frozen: re.Pattern[str]

    @classmethod
    def create(cls, repository: str, moving: str, frozen: str) -> TagRule:
        try:
            return cls(repository, re.compile(moving), re.compile(frozen))
        except re.error as exc:
            raise PinguardError(f"tag rule for {repository!r}: invalid pattern: {exc}") from None


DEFAULT_RULE = TagRule.create(
    "*",
    moving=r"^(?:latest|(?:.*[-_])?v\d+(?:\.\d+)?)$",
    frozen=r"^(?:.*[-_])?v\d+\.\d+\.\d+$",
)


@dataclass(frozen=True)
class TagRules:
    rules: Sequence[TagRule] = ()  # first match wins; DEFAULT_RULE after them

    def rule_for(self, name: str) -> TagRule:
        return next((r for r in self.rules if fnmatch.fnmatchcase(name, r.repository)), DEFAULT_RULE)

    def kind(self, name: str, tag: str) -> TagKind:
        rule = self.rule_for(name)
        if rule.frozen.search(tag):
            return TagKind.FROZEN
        if rule.moving.search(tag):
            return TagKind.MOVING
        return TagKind.OTHER

    def frozen_candidates(self, name: str, moving: str, tags: Iterable[str]) -> list[str]:
        """Frozen tags that could stand behind `moving`, newest version first.

        `train-ml-cuda-v1.1` may be served by `train-ml-cuda-v1.1.<n>`; a moving tag without
        a version (`latest`) by any frozen tag.
        """
        has_version = re.search(_TRAILING_VERSION + "$", moving) is not None and moving != "latest"
        candidates = [
            t for t in tags
            if self.kind(name, t) is TagKind.FROZEN and (not has_version or t.startswith(moving + "."))
        ]
        return sorted(candidates, key=_version_key, reverse=True)


def _version_key(tag: str) -> tuple[int, Version | str]:
    from packaging.version import InvalidVersion, Version  # only where frozen tags are ranked

    match = re.search(_TRAILING_VERSION + "$", tag)
    try:
        return (1, Version(match.group("version"))) if match else (0, tag)
    except InvalidVersion:
        return (0, tag)
