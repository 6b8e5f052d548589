"""require-sbom: a locked image comes with an SBOM (SPDX or CycloneDX).

Read offline from the lockfile (`pinguard lock --provenance`). Option:
`repositories` (globs; default every one).

PASS: `sbom = [{ predicate_type = "https://spdx.dev/Document", ... }]`
FAIL: `sbom = []`, or provenance never checked
"""
from __future__ import annotations

from collections.abc import Iterator

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, at, judged_by_evidence, spelled
from pinguard.provenance.model import Evidence
from pinguard.sources.base import Found

ID = "require-sbom"
TYPE = "reference"
CONF: dict[str, object] = {"repositories": [str]}
DEFAULT: dict[str, object] = {"level": "off", "repositories": []}


@judged_by_evidence
def check(conf: Conf, found: Found, recorded: Evidence) -> Iterator[Problem]:
    if not recorded.sboms:
        yield at(found, f"{spelled(found)} had no SBOM when its provenance was checked ({recorded.checked_at})")
