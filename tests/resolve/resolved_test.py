"""A resolved reference as a record: what it says of a tag it did not match, its JSON, and failure lines."""

from __future__ import annotations

import dataclasses

from pinguard.errors import DeadlinePassed, NotFound, PinguardError
from pinguard.reference import Reference, parse
from pinguard.resolve.resolved import Resolved, failure_lines
from pinguard.resolve.tags import TagKind

DIGEST = "sha256:" + "a" * 64
MOVED = "sha256:" + "b" * 64
RESOLVED = Resolved(name="ghcr.io/team/app", tag="1.0", digest=DIGEST,
                    media_type="application/vnd.oci.image.index.v1+json", size=512, tag_kind=TagKind.FROZEN,
                    frozen_tag=None, resolved_at="2026-11-30T05:00:00Z", platforms={"linux/amd64": MOVED})


def test_a_tag_pointing_elsewhere_is_named_with_where_it_points() -> None:
    moved = dataclasses.replace(RESOLVED, tag_served=False, tag_digest=MOVED)
    assert moved.unserved() == f"ghcr.io/team/app:1.0 points to {MOVED}, not to {DIGEST}, the digest written beside it"
    gone = dataclasses.replace(RESOLVED, tag_served=False)
    assert gone.unserved().startswith("ghcr.io/team/app:1.0 is not served by the registry, not to ")


def test_json_says_of_the_tag_only_when_it_was_not_served() -> None:
    as_json = RESOLVED.to_json()
    assert as_json["digest"] == DIGEST
    assert as_json["tag_kind"] == TagKind.FROZEN.value
    assert as_json["platforms"] == {"linux/amd64": MOVED}
    assert "tag_served" not in as_json and "provenance" not in as_json
    unserved = dataclasses.replace(RESOLVED, tag_served=False, tag_digest=MOVED).to_json()
    assert (unserved["tag_served"], unserved["tag_digest"]) == (False, MOVED)


def test_failure_lines_name_a_registry_the_deadline_cut_short_once() -> None:
    refs = [parse(f"ghcr.io/team/app:{tag}") for tag in ("1", "2", "3")] + [parse("ghcr.io/team/other:1")]
    outcomes: dict[Reference, Resolved | PinguardError] = {
        refs[0]: RESOLVED,
        refs[1]: NotFound("ghcr.io/team/app: 2 not found"),
        refs[2]: DeadlinePassed("ghcr.io", "ghcr.io: the run's deadline passed"),
        refs[3]: DeadlinePassed("ghcr.io", "ghcr.io: the run's deadline passed"),
    }
    assert failure_lines(outcomes) == [
        "ghcr.io/team/app:2: ghcr.io/team/app: 2 not found",
        "ghcr.io: the run's deadline passed; 2 of 4 references left unresolved",
    ]
