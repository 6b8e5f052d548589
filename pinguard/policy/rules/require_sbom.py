"""require-sbom: every locked image comes with an SBOM (SPDX or CycloneDX).

Read offline from the lockfile (`pinguard lock --provenance`), which records the digest
each SBOM describes. Every platform image the entry records needs one about it (or about
the index, which lists it by digest), and the index itself too with `require-index: true`.
Options: `repositories` (globs; default every one), `require-index`.

PASS: `sbom = [{ predicate_type = "https://spdx.dev/Document", subject = "<each platform's digest>", ... }]`
FAIL: `sbom = []`, an SBOM for one platform only, or provenance never checked
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.lock.lockfile import LockEntry
from pinguard.policy.rules.common import Conf, at, judged_by_evidence, named, spelled, uncovered, unread
from pinguard.provenance.evidence import OUTDATED, Evidence
from pinguard.sources.base import Found

ID = "require-sbom"
TYPE: Final = "reference"
CONF: dict[str, object] = {"repositories": [str], "require-index": bool}
DEFAULT: dict[str, object] = {"level": "off", "repositories": [], "require-index": False}


@judged_by_evidence
def check(conf: Conf, found: Found, entry: LockEntry, recorded: Evidence) -> Iterator[Problem]:
    missing = uncovered(entry, conf["require-index"], (sbom.subject for sbom in recorded.sboms))
    if not missing:
        return
    if not recorded.sboms:
        yield at(found, f"{spelled(found)} had no SBOM when its provenance was checked ({recorded.checked_at})"
                        f"{unread(recorded)}")
    elif recorded.outdated:
        yield at(found, f"{spelled(found)}: its SBOMs were {OUTDATED}")
    else:
        yield at(found, f"{spelled(found)}: no SBOM describes {named(missing)}{unread(recorded)}")
