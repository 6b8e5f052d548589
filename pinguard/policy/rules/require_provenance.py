"""require-provenance: every locked image says who built it and from which source, in a statement the policy trusts.

Read offline from the lockfile (`pinguard lock --provenance`). A SLSA provenance statement
counts when it is `signed`: in a DSSE envelope whose signature a key of the policy's
`provenance.keys` verified. Unsigned statements (BuildKit's `--provenance` attestations)
count only with `allow-unsigned: true`; a statement whose envelope's signature did not
verify never counts. Every platform image the entry records needs one that names it
(or the index, which lists it by digest), and the index itself too with `require-index:
true`. Every statement that counts must name the manifest it was found for and, when the
options are set, a builder and a source repository matching their globs. Options:
`repositories` (globs; default every one), `builders`, `sources`, `allow-unsigned`, `require-index`.

PASS: a signed statement about each platform, `builder = "https://github.com/actions/runner"`,
`source = "https://github.com/acme/app"`
FAIL: no provenance, an unsigned one (without `allow-unsigned`), one whose signature failed,
one platform without any, a statement about another digest, a builder not in `builders`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.lock.lockfile import LockEntry
from pinguard.policy.rules.common import (
    Conf,
    Subject,
    at,
    covers,
    judged_by_evidence,
    matches,
    named,
    spelled,
    uncovered,
    unread,
)
from pinguard.provenance.evidence import Build, Evidence
from pinguard.sources.base import Found

ID = "require-provenance"
TYPE: Final = "reference"
CONF: dict[str, object] = {"repositories": [str], "builders": [str], "sources": [str], "allow-unsigned": bool,
                           "require-index": bool}
DEFAULT: dict[str, object] = {"level": "off", "repositories": [], "builders": [], "sources": [],
                              "allow-unsigned": False, "require-index": False}


@judged_by_evidence
def check(conf: Conf, found: Found, entry: LockEntry, recorded: Evidence) -> Iterator[Problem]:
    if not recorded.builds:
        yield at(found, f"{spelled(found)} had no provenance when it was checked ({recorded.checked_at})"
                        f"{unread(recorded)}")
        return
    # What the statements the policy takes at their word say against it; each objection is a finding.
    objections = {build: _disallowed(conf, build) for build in recorded.builds if counts(conf, build)}
    for objection in objections.values():
        if objection is not None:
            yield at(found, f"{spelled(found)}{objection}")
    missing = uncovered(entry, conf["require-index"], (b.subject for b, o in objections.items() if o is None))
    objected = [b.subject for b, o in objections.items() if o is not None and b.subject_matches]
    if any(not any(covers(about, subject, entry) for about in objected) for subject in missing):
        yield at(found, f"{spelled(found)}: no provenance the policy accepts for {named(missing)} "
                        f"({_why(conf, entry, recorded, missing)}){unread(recorded)}")


def counts(conf: Conf, build: Build) -> bool:
    """Whether the policy takes a statement at its word: signed by a trusted key, or unsigned where it allows that."""
    return not build.failed and (build.signed or conf["allow-unsigned"])


def _disallowed(conf: Conf, build: Build) -> str | None:
    """What a statement that counts says against the policy, as the rest of a finding; None: nothing."""
    if not build.subject_matches:
        return f": a provenance statement ({build.statement_digest}) is about {build.subject}, not this image"
    if not matches(build.builder, conf["builders"]):
        return (f" was built by {build.builder or 'an unnamed builder'}, "
                f"not one of {', '.join(conf['builders'])}")
    if not matches(build.source, conf["sources"]):
        return (f" was built from {build.source or 'an unnamed source'}, "
                f"not one of {', '.join(conf['sources'])}")
    return None


def _why(conf: Conf, entry: LockEntry, recorded: Evidence, missing: list[Subject]) -> str:
    """What the statements recorded for `missing` are, when none counts."""
    about = [b for b in recorded.builds if b.subject_matches and any(covers(b.subject, s, entry) for s in missing)]
    return "; ".join(sorted({_refused(b) for b in about if not counts(conf, b)})) or "none found about it"


def _refused(build: Build) -> str:
    """Why a statement does not count."""
    if build.problem is not None:
        return f"a statement whose signature did not verify: {build.problem}"
    return "an unsigned statement, which the policy does not allow (`allow-unsigned`)"
