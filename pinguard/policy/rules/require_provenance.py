"""require-provenance: a locked image says who built it, from which source, about itself.

Read offline from the lockfile (`pinguard lock --provenance`): every platform's SLSA
provenance statement must name the manifest it was found for, and, when the options
are set, a builder and a source repository matching their globs. Options:
`repositories` (globs; default every one), `builders`, `sources`.

PASS: `builder = "https://github.com/actions/runner"`, `source = "https://github.com/acme/app"`
FAIL: no provenance, a statement about another digest, a builder not in `builders`
"""
from __future__ import annotations

from collections.abc import Iterator

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, at, judged_by_evidence, matches, spelled
from pinguard.provenance.model import Evidence
from pinguard.sources.base import Found

ID = "require-provenance"
TYPE = "reference"
CONF: dict[str, object] = {"repositories": [str], "builders": [str], "sources": [str]}
DEFAULT: dict[str, object] = {"level": "off", "repositories": [], "builders": [], "sources": []}


@judged_by_evidence
def check(conf: Conf, found: Found, recorded: Evidence) -> Iterator[Problem]:
    if not recorded.builds:
        yield at(found, f"{spelled(found)} had no provenance when it was checked ({recorded.checked_at})")
        return
    for build in recorded.builds:
        if not build.subject_matches:
            yield at(found, f"{spelled(found)}: a provenance statement ({build.statement_digest}) is about "
                            f"{build.subject}, not this image")
        elif not matches(build.builder, conf["builders"]):
            yield at(found, f"{spelled(found)} was built by {build.builder or 'an unnamed builder'}, "
                            f"not one of {', '.join(conf['builders'])}")
        elif not matches(build.source, conf["sources"]):
            yield at(found, f"{spelled(found)} was built from {build.source or 'an unnamed source'}, "
                            f"not one of {', '.join(conf['sources'])}")
