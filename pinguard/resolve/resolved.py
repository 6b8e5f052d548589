"""A reference resolved: its digest and the evidence a lockfile records. Records only: no network."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from pinguard.errors import DeadlinePassed, PinguardError, deadline_lines
from pinguard.reference import Reference
from pinguard.resolve.tags import TagKind

if TYPE_CHECKING:  # the evidence records are loaded where evidence is gathered or read
    from pinguard.provenance.evidence import Evidence


@dataclass(frozen=True)
class Resolved:
    """One reference resolved, with the evidence behind its digest."""

    name: str
    tag: str | None
    digest: str
    media_type: str
    size: int
    tag_kind: TagKind
    frozen_tag: str | None
    resolved_at: str
    platforms: dict[str, str] = field(default_factory=dict)
    evidence: Evidence | None = None  # provenance, signatures and SBOMs, when they were looked for
    # False for a reference written with a digest its tag did not point to (`name:1.0@<a build of 0.9>`);
    # `tag_digest` then says where the tag pointed (None: the registry does not serve the tag).
    tag_served: bool = True
    tag_digest: str | None = None

    def unserved(self) -> str:
        """What to say of a tag that did not point to the digest written beside it."""
        where = f"points to {self.tag_digest}" if self.tag_digest else "is not served by the registry"
        return f"{self.name}:{self.tag} {where}, not to {self.digest}, the digest written beside it"

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name, "tag": self.tag, "digest": self.digest, "media_type": self.media_type,
            "size": self.size, "tag_kind": self.tag_kind.value, "frozen_tag": self.frozen_tag,
            "resolved_at": self.resolved_at, "platforms": self.platforms,
            **({} if self.tag_served else {"tag_served": False, "tag_digest": self.tag_digest}),
            **({"provenance": asdict(self.evidence)} if self.evidence is not None else {}),
        }


def failure_lines(outcomes: Mapping[Reference, Resolved | PinguardError]) -> list[str]:
    """What to say of the references that failed: a line each, except that a registry whose
    requests the run's deadline cut short is named once, with how many references were left."""
    lines = [f"{reference.familiar()}: {outcome}" for reference, outcome in outcomes.items()
             if isinstance(outcome, PinguardError) and not isinstance(outcome, DeadlinePassed)]
    return lines + deadline_lines(outcomes.values(), len(outcomes), "references left unresolved")
