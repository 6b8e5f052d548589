"""require-signature: every locked image carries a verified signature by a key or identity the policy names.

Read offline from the lockfile, where `pinguard lock --provenance` records every
signature it verified (cosign key-based, Sigstore keyless bundles, Notation), and
every one it could not, with the digest each one signs. A signature counts only when
it verified and the rule names its signer; what the rule does not name is not trusted:

- cosign key-based: its key id is in `keys` (`sha256:` of the public key, as the lock records it);
- Sigstore keyless and Notation: its certificate's identity matches a glob in `identities`
  and, when `issuers` is given, its issuer one of those (Sigstore: the OIDC issuer;
  Notation: the certificate's subject and issuer names, as RFC 4514 writes them).

A policy that names no key and no identity would trust no signature: it is refused when
it is loaded. Every platform image the entry records must be signed, itself or through
the index that lists it by digest (what `cosign sign IMAGE:TAG` signs); with
`require-index: true`, the index itself too.

A cosign signature also says which image it signs (its payload's docker-reference, which the
lock records as `reference`): it counts only when that names the locked repository, or a copy of
it the lock records (`copies`), as podman and CRI-O require by default; a signature of the same
digest made for another repository, or naming none, does not. `signed-repository: any` takes
it whatever it names. Sigstore bundles and Notation signatures bind a digest alone.

Options: `repositories` (globs; default every one), `keys`, `identities`, `issuers`,
`require-index`, `signed-repository` (`locked`, the default, or `any`).

PASS: `keys: [sha256:K]`, and a cosign signature verified with key K on the index, naming the repository
FAIL: only the arm64 image signed; a Sigstore or Notation signature where only `keys` are named;
a signer not listed; a signature that did not verify; a cosign signature naming another repository
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.errors import InvalidReference
from pinguard.findings import Problem
from pinguard.lock.lockfile import LockEntry
from pinguard.policy.rules.common import (
    Conf,
    Subject,
    at,
    covers,
    judged_by_evidence,
    listed,
    named,
    spelled,
    uncovered,
    unread,
)
from pinguard.provenance.evidence import OUTDATED, Evidence, Signature
from pinguard.reference import parse
from pinguard.sources.base import Found

ID = "require-signature"
TYPE: Final = "reference"
CONF: dict[str, object] = {"repositories": [str], "keys": [str], "identities": [str], "issuers": [str],
                           "require-index": bool, "signed-repository": ("locked", "any")}
DEFAULT: dict[str, object] = {"level": "off", "repositories": [], "keys": [], "identities": [], "issuers": [],
                              "require-index": False, "signed-repository": "locked"}


def conf_problem(conf: Conf) -> str | None:
    """Why the options cannot work, checked when the policy is loaded with the rule on."""
    if not conf["keys"] and not conf["identities"]:
        return "names no `keys` and no `identities`: it would trust no signature"
    return None


@judged_by_evidence
def check(conf: Conf, found: Found, entry: LockEntry, recorded: Evidence) -> Iterator[Problem]:
    trusted = [s.subject for s in recorded.signatures if trusts(conf, s) and _for_entry(conf, s, entry)]
    unsigned = uncovered(entry, conf["require-index"], trusted)
    if not unsigned:
        return
    if not recorded.signatures:
        yield at(found, f"{spelled(found)} had no signature when its provenance was checked "
                        f"({recorded.checked_at}){unread(recorded)}")
    else:
        yield at(found, f"{spelled(found)}: {_why(conf, entry, recorded, unsigned)}{unread(recorded)}")


def trusts(conf: Conf, signature: Signature) -> bool:
    """Whether the signature verified and the policy names its signer."""
    if not signature.verified:
        return False
    if signature.kind == "cosign":
        return signature.identity is not None and signature.identity in conf["keys"]
    if signature.kind in ("sigstore", "notation"):
        return listed(signature.identity, conf["identities"]) and (
            not conf["issuers"] or listed(signature.issuer, conf["issuers"]))
    return False


def _for_entry(conf: Conf, signature: Signature, entry: LockEntry) -> bool:
    """Whether a signature signs the image as the entry's: a cosign one must name its repository or a copy of it."""
    if signature.kind != "cosign" or conf["signed-repository"] == "any":
        return True
    try:
        name = parse(signature.reference).name if signature.reference else None
    except InvalidReference:  # a lockfile edited by hand
        return False
    return name in (entry.name, *(copy.to for copy in entry.copies))


def _why(conf: Conf, entry: LockEntry, recorded: Evidence, unsigned: list[Subject]) -> str:
    """Why `unsigned` carry no signature the policy trusts, from the signatures recorded for them."""
    about = [s for s in recorded.signatures if any(covers(s.subject, subject, entry) for subject in unsigned)]
    elsewhere = [s for s in about if trusts(conf, s) and not _for_entry(conf, s, entry)]
    if any(s.reference is None for s in elsewhere):
        return f"its signatures were {OUTDATED}"
    if elsewhere:
        names = " or ".join(sorted({s.reference or "no image" for s in elsewhere}))
        return (f"{named(unsigned)} signed only by signatures that name {names}, not {entry.name} or a copy the "
                "lock records (`signed-repository: any` takes a signature whatever image it names)")
    signers = sorted({_signer(s) for s in about if s.verified})
    if signers:
        return f"{named(unsigned)} signed only by {', '.join(signers)}, which the policy does not trust"
    problems = sorted({f"{s.kind}: {s.problem or 'not verified'}" for s in about})
    if problems:
        return f"no signature on {named(unsigned)} verified ({'; '.join(problems)})"
    if recorded.outdated:
        return f"its signatures were {OUTDATED}"
    return f"no signature on {named(unsigned)}, which the signatures recorded do not cover"


def _signer(signature: Signature) -> str:
    issuer = f" ({signature.issuer})" if signature.issuer else ""
    return f"{signature.kind} {signature.identity or '?'}{issuer}"
