"""require-signature: a locked image carries a verified signature from a trusted key or identity.

Read offline from the lockfile, where `pinguard lock --provenance` records every
signature it verified (cosign key-based, Sigstore keyless bundles, Notation) and
every one it could not. Options: `repositories` (globs; default every one),
`keys` (key ids, `sha256:` of the public key, as the lock records them),
`identities` and `issuers` (globs on a keyless certificate's identity and OIDC issuer).

PASS: a cosign signature verified with a key whose id is listed in `keys`
FAIL: no signature, one that did not verify, or one by an identity not listed
"""
from __future__ import annotations

from collections.abc import Iterator

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, at, judged_by_evidence, matches, spelled
from pinguard.provenance.model import Evidence, Signature
from pinguard.sources.base import Found

ID = "require-signature"
TYPE = "reference"
CONF: dict[str, object] = {"repositories": [str], "keys": [str], "identities": [str], "issuers": [str]}
DEFAULT: dict[str, object] = {"level": "off", "repositories": [], "keys": [], "identities": [], "issuers": []}


@judged_by_evidence
def check(conf: Conf, found: Found, recorded: Evidence) -> Iterator[Problem]:
    verified = [s for s in recorded.signatures if s.verified]
    if any(_trusted(s, conf) for s in verified):
        return
    if verified:
        who = ", ".join(sorted({f"{s.kind} {s.identity}" + (f" ({s.issuer})" if s.issuer else "") for s in verified}))
        yield at(found, f"{spelled(found)} is signed only by {who}, which the policy does not trust")
    elif recorded.signatures:
        problems = "; ".join(sorted({f"{s.kind}: {s.problem}" for s in recorded.signatures}))
        yield at(found, f"{spelled(found)}: no signature verified ({problems})")
    else:
        yield at(found, f"{spelled(found)} had no signature when its provenance was checked ({recorded.checked_at})")


def _trusted(signature: Signature, conf: Conf) -> bool:
    keys: list[str] = conf["keys"]
    if signature.kind == "cosign" and keys:
        return signature.identity in keys
    return matches(signature.identity, conf["identities"]) and (
        not conf["issuers"] or matches(signature.issuer, conf["issuers"]))
