"""The provenance rules judged against evidence an attacker chose: whose signature, about which image.

A rule names what it trusts, and an image is vouched for only when each platform it runs (and
the index, when the policy asks) carries evidence the policy names. The property test draws
platforms, evidence and policies at random and checks each rule against an oracle written
here from that sentence, apart from the rules' code.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pinguard.lock import lockfile
from pinguard.lock.lockfile import Copy, Lock, LockEntry, LockfileError
from pinguard.policy.load import PolicyError, load
from pinguard.policy.rules import require_provenance, require_sbom, require_signature
from pinguard.policy.rules.common import Context
from pinguard.provenance.evidence import OUTDATED, Build, Evidence, Sbom, Signature
from pinguard.reference import parse
from pinguard.sources.base import Found, Span

NAME, TAG = "ghcr.io/acme/trainer", "1.0"
INDEX, AMD64, ARM64, PPC, ELSEWHERE = ("sha256:" + c * 64 for c in "abcde")
PLATFORM_DIGESTS = {"linux/amd64": AMD64, "linux/arm64": ARM64, "linux/ppc64le": PPC}
KEY, OTHER_KEY = "sha256:" + "1" * 64, "sha256:" + "2" * 64
ACME = "https://github.com/acme/trainer/.github/workflows/release.yml@refs/heads/main"
ATTACKER = "https://github.com/attacker/evil/.github/workflows/x.yml@refs/heads/main"
GITHUB, ELSEWHERE_ISSUER = "https://token.actions.githubusercontent.com", "https://accounts.example.com"
FOUND = Found("pod.yaml", "kubernetes", Span(0, 1, 5, 12), f"{NAME}:{TAG}", parse(f"{NAME}:{TAG}"))
COPY, EVIL = "registry.internal/mirror/acme/trainer", "docker.io/evil/other"
# What a cosign signature may say it signs, and the repository that names, worked out by hand ("": none).
CLAIMS = {NAME: NAME, f"{NAME}:{TAG}": NAME, f"{NAME}@{INDEX}": NAME, COPY: COPY, "evil/other": EVIL, EVIL: EVIL,
          "index.docker.io/evil/other": EVIL, "": None}


def entry(evidence: Evidence, platforms: dict[str, str] | None = None, copies: tuple[str, ...] = ()) -> LockEntry:
    platforms = {"linux/amd64": AMD64} if platforms is None else platforms
    single = INDEX in platforms.values()  # a single manifest: the digest names the image itself
    media_type = f"application/vnd.oci.image.{'manifest' if single else 'index'}.v1+json"
    return LockEntry(NAME, TAG, INDEX, media_type, 0, "other", None, "2026-11-30T00:00:00Z", platforms, evidence,
                     copies=tuple(Copy(to, "2026-12-01T00:00:00Z") for to in copies))


def _by_key(subject: str, reference: str | None = NAME) -> Signature:
    """A cosign signature by KEY, recorded verified, saying it signs `reference`."""
    return Signature("cosign", KEY, None, True, subject=subject, reference=reference)


def judged(rule: Any, conf: dict[str, Any], locked: LockEntry) -> list[str]:
    context = Context(Lock().with_entries([locked]), "pinguard.lock")
    return [problem.message for problem in rule.check({**rule.DEFAULT, **conf}, FOUND, context)]


# --- the oracle -----------------------------------------------------------------------------------------


def _glob(value: str | None, patterns: Sequence[str]) -> bool:
    return value is not None and any(fnmatch.fnmatchcase(value, pattern) for pattern in patterns)


def _required(locked: LockEntry, require_index: bool) -> set[str]:
    platforms = set(locked.platforms.values())
    return platforms | {locked.digest} if require_index or not platforms else platforms


def _vouched(locked: LockEntry, require_index: bool, about: Iterable[str | None]) -> bool:
    """Every required image has evidence about it, or about the index that lists it by digest."""
    digests = set(about)
    return all(image in digests or locked.digest in digests for image in _required(locked, require_index))


def signature_oracle(conf: dict[str, Any], locked: LockEntry) -> bool:
    def named(s: Signature) -> bool:
        if s.kind == "cosign":
            image = CLAIMS.get(s.reference) if s.reference is not None else None
            ours = image is not None and (image == locked.name or image in {c.to for c in locked.copies})
            return s.identity in conf["keys"] and (conf["signed-repository"] == "any" or ours)
        if s.kind in ("sigstore", "notation"):
            return _glob(s.identity, conf["identities"]) and (not conf["issuers"] or _glob(s.issuer, conf["issuers"]))
        return False

    assert locked.evidence is not None
    return _vouched(locked, conf["require-index"],
                    (s.subject for s in locked.evidence.signatures if s.verified and named(s)))


def provenance_oracle(conf: dict[str, Any], locked: LockEntry) -> bool:
    def trusted(b: Build) -> bool:
        return b.problem is None and (b.signed or conf["allow-unsigned"])

    def allowed(b: Build) -> bool:
        return (b.subject_matches and (not conf["builders"] or _glob(b.builder, conf["builders"]))
                and (not conf["sources"] or _glob(b.source, conf["sources"])))

    assert locked.evidence is not None
    taken = [b for b in locked.evidence.builds if trusted(b)]
    return all(allowed(b) for b in taken) and _vouched(locked, conf["require-index"], (b.subject for b in taken))


def sbom_oracle(conf: dict[str, Any], locked: LockEntry) -> bool:
    assert locked.evidence is not None
    return _vouched(locked, conf["require-index"], (s.subject for s in locked.evidence.sboms))


# --- what is drawn --------------------------------------------------------------------------------------

subjects = st.sampled_from([INDEX, AMD64, ARM64, PPC, ELSEWHERE, None])
signatures = st.builds(
    Signature, kind=st.sampled_from(["cosign", "sigstore", "notation", "x509-ish"]),
    identity=st.sampled_from([KEY, OTHER_KEY, ACME, ATTACKER, None]),
    issuer=st.sampled_from([GITHUB, ELSEWHERE_ISSUER, None]), verified=st.booleans(), problem=st.none(),
    subject=subjects, reference=st.sampled_from([*CLAIMS, None]))
builds = st.builds(
    Build, predicate_type=st.just("https://slsa.dev/provenance/v1"),
    builder=st.sampled_from(["https://github.com/actions/runner", "https://evil.example/builder", None]),
    source=st.sampled_from(["https://github.com/acme/trainer", "https://github.com/attacker/evil", None]),
    revision=st.none(), started=st.none(), finished=st.none(), statement_digest=st.just(ELSEWHERE),
    subject=st.sampled_from([INDEX, AMD64, ARM64, PPC, ELSEWHERE]), subject_matches=st.booleans(),
    signed=st.booleans(), problem=st.sampled_from([None, None, "none of the 1 trusted cosign keys verifies it"]))
sboms = st.builds(Sbom, predicate_type=st.just("https://spdx.dev/Document"), digest=st.just(ELSEWHERE),
                  packages=st.just(3), subject=subjects)
platform_sets = st.one_of(
    st.just({"linux/amd64": INDEX}),  # a single manifest: the index is the image
    st.lists(st.sampled_from(sorted(PLATFORM_DIGESTS)), min_size=1, max_size=3, unique=True).map(
        lambda names: {name: PLATFORM_DIGESTS[name] for name in names}),
)
entries = st.builds(
    lambda platforms, b, s, sb, copies: entry(Evidence("2026-11-30T00:00:00Z", tuple(b), tuple(s), tuple(sb)),
                                              platforms, copies),
    platform_sets, st.lists(builds, max_size=4), st.lists(signatures, max_size=4), st.lists(sboms, max_size=3),
    st.sampled_from([(), (COPY,)]))
globs = st.lists(st.sampled_from(["https://github.com/acme/*", "*", "https://github.com/*", "nobody"]), max_size=2)


@settings(max_examples=400, deadline=None)
@given(locked=entries, require_index=st.booleans(),
       keys=st.lists(st.sampled_from([KEY, OTHER_KEY]), max_size=2),
       identities=globs, issuers=st.lists(st.sampled_from([GITHUB, "https://accounts.*"]), max_size=1),
       signed_repository=st.sampled_from(["locked", "any"]))
def test_require_signature_passes_only_when_every_required_image_carries_a_named_signature(
        locked: LockEntry, require_index: bool, keys: list[str], identities: list[str], issuers: list[str],
        signed_repository: str) -> None:
    conf = {"keys": keys, "identities": identities, "issuers": issuers, "require-index": require_index,
            "signed-repository": signed_repository}
    assert (judged(require_signature, conf, locked) == []) == signature_oracle(conf, locked)


@settings(max_examples=400, deadline=None)
@given(locked=entries, require_index=st.booleans(), allow_unsigned=st.booleans(),
       builders=st.lists(st.sampled_from(["https://github.com/actions/*", "https://evil.example/*"]), max_size=1),
       sources=st.lists(st.sampled_from(["https://github.com/acme/*"]), max_size=1))
def test_require_provenance_passes_only_when_every_required_image_has_a_trusted_allowed_statement(
        locked: LockEntry, require_index: bool, allow_unsigned: bool, builders: list[str], sources: list[str]) -> None:
    conf = {"builders": builders, "sources": sources, "allow-unsigned": allow_unsigned, "require-index": require_index}
    assert (judged(require_provenance, conf, locked) == []) == provenance_oracle(conf, locked)


@settings(max_examples=300, deadline=None)
@given(locked=entries, require_index=st.booleans())
def test_require_sbom_passes_only_when_every_required_image_has_an_sbom(locked: LockEntry,
                                                                        require_index: bool) -> None:
    conf = {"require-index": require_index}
    assert (judged(require_sbom, conf, locked) == []) == sbom_oracle(conf, locked)


# --- the cases behind the property, one by one ------------------------------------------------------------


def _signed(*signatures: Signature, platforms: dict[str, str] | None = None) -> LockEntry:
    return entry(Evidence("2026-11-30T00:00:00Z", signatures=signatures), platforms)


def test_a_keys_only_policy_refuses_keyless_and_notation_signatures_even_recorded_verified() -> None:
    keys_only = {"keys": [KEY]}
    for kind, identity, issuer in [("sigstore", ATTACKER, GITHUB), ("notation", "CN=Evil,O=Attacker", "CN=Evil CA")]:
        keyless = _signed(Signature(kind, identity, issuer, True, subject=INDEX))
        [message] = judged(require_signature, keys_only, keyless)
        assert f"signed only by {kind} {identity}" in message and "which the policy does not trust" in message
    assert judged(require_signature, keys_only, _signed(_by_key(INDEX))) == []


def test_identities_trust_only_what_they_match_and_issuers_narrow_them() -> None:
    acme = _signed(Signature("sigstore", ACME, GITHUB, True, subject=INDEX))
    assert judged(require_signature, {"identities": ["https://github.com/acme/*"]}, acme) == []
    assert judged(require_signature, {"identities": ["https://github.com/other/*"]}, acme) != []
    assert judged(require_signature, {"identities": ["https://github.com/acme/*"], "issuers": [ELSEWHERE_ISSUER]},
                  acme) != []
    # a key id is no identity: a cosign signature is trusted by `keys` alone
    assert judged(require_signature, {"identities": ["*"]}, _signed(_by_key(INDEX))) != []


def test_a_signature_recorded_unverified_never_counts() -> None:
    [message] = judged(require_signature, {"keys": [KEY]}, _signed(Signature("cosign", KEY, None, False,
                                                                             "signs sha256:9, not this image", INDEX)))
    assert "no signature on the linux/amd64 image verified (cosign: signs sha256:9, not this image)" in message


def test_one_signed_platform_does_not_sign_the_others_nor_the_index() -> None:
    platforms = {"linux/amd64": AMD64, "linux/arm64": ARM64}
    arm_only = _signed(_by_key(ARM64), platforms=platforms)
    [message] = judged(require_signature, {"keys": [KEY]}, arm_only)
    assert "no signature on the linux/amd64 image" in message and "arm64" not in message
    both = _signed(_by_key(ARM64), _by_key(AMD64), platforms=platforms)
    assert judged(require_signature, {"keys": [KEY]}, both) == []
    [message] = judged(require_signature, {"keys": [KEY], "require-index": True}, both)
    assert "no signature on the index" in message
    index_signed = _signed(_by_key(INDEX), platforms=platforms)
    assert judged(require_signature, {"keys": [KEY], "require-index": True}, index_signed) == []


def test_an_index_without_platforms_recorded_needs_the_index_signed() -> None:
    assert judged(require_signature, {"keys": [KEY]}, _signed(platforms={})) != []
    signed = _signed(_by_key(INDEX), platforms={})
    assert judged(require_signature, {"keys": [KEY]}, signed) == []


@pytest.mark.parametrize(("reference", "copies", "counts"), [
    (NAME, (), True),
    (f"{NAME}:{TAG}", (), True),  # names compared normalised, tag and digest aside
    (COPY, (COPY,), True),  # a copy the lock records
    (COPY, (), False),  # a copy the lock does not record is another repository
    (EVIL, (COPY,), False),  # the same digest, signed as another repository's
    ("index.docker.io/evil/other", (), False),
    ("", (), False),  # names no image: podman and CRI-O refuse it, and so does the rule by default
])
def test_a_cosign_signature_counts_only_for_the_repository_it_names(reference: str, copies: tuple[str, ...],
                                                                    counts: bool) -> None:
    locked = entry(Evidence("2026-11-30T00:00:00Z", signatures=(_by_key(INDEX, reference),)), copies=copies)
    found = judged(require_signature, {"keys": [KEY]}, locked)
    assert (found == []) is counts
    if not counts:
        [message] = found
        assert message.endswith(f"the linux/amd64 image signed only by signatures that name {reference or 'no image'}, "
                                f"not {NAME} or a copy the lock records "
                                "(`signed-repository: any` takes a signature whatever image it names)")
    assert judged(require_signature, {"keys": [KEY], "signed-repository": "any"}, locked) == []


def test_a_cosign_signature_recorded_without_the_image_it_names_says_how_to_record_it_again() -> None:
    [message] = judged(require_signature, {"keys": [KEY]}, _signed(_by_key(INDEX, None)))
    assert message.endswith(f"its signatures were {OUTDATED}") and "pinguard lock --provenance" in message


def test_a_repository_hand_written_into_the_lock_that_is_no_reference_names_nothing() -> None:
    [message] = judged(require_signature, {"keys": [KEY]}, _signed(_by_key(INDEX, "Not A Reference")))
    assert "signed only by signatures that name Not A Reference, not" in message


def test_evidence_recorded_without_subjects_vouches_for_nothing_and_says_how_to_record_it_again() -> None:
    old = _signed(Signature("cosign", KEY, None, True))
    [message] = judged(require_signature, {"keys": [KEY]}, old)
    assert message.endswith(f"its signatures were {OUTDATED}") and "pinguard lock --provenance" in message
    old_sbom = entry(Evidence("2026-11-30T00:00:00Z", sboms=(Sbom("https://spdx.dev/Document", ELSEWHERE, 3),)))
    [message] = judged(require_sbom, {}, old_sbom)
    assert "pinguard lock --provenance" in message


def _build(**fields: Any) -> Build:
    values: dict[str, Any] = {
        "predicate_type": "https://slsa.dev/provenance/v1", "builder": "https://github.com/actions/runner",
        "source": "https://github.com/acme/trainer", "revision": None, "started": None, "finished": None,
        "statement_digest": ELSEWHERE, "subject": AMD64, "subject_matches": True, "signed": True}
    return Build(**(values | fields))


def _built(*builds: Build) -> LockEntry:
    return entry(Evidence("2026-11-30T00:00:00Z", builds=builds))


def test_provenance_counts_only_when_signed_unless_unsigned_is_allowed_and_never_when_its_signature_failed() -> None:
    assert judged(require_provenance, {}, _built(_build())) == []
    [message] = judged(require_provenance, {}, _built(_build(signed=False)))
    assert "an unsigned statement, which the policy does not allow (`allow-unsigned`)" in message
    assert judged(require_provenance, {"allow-unsigned": True}, _built(_build(signed=False))) == []
    failed = _build(signed=False, problem="none of the 1 trusted cosign keys verifies its signature")
    for allow in (False, True):
        [message] = judged(require_provenance, {"allow-unsigned": allow}, _built(failed))
        assert "a statement whose signature did not verify: none of the 1 trusted cosign keys" in message


def test_an_untrusted_statement_cannot_smuggle_in_a_builder_the_policy_refuses_nor_stand_for_one() -> None:
    evil = _build(signed=False, problem="none of the 1 trusted cosign keys verifies its signature",
                  builder="https://evil.example/builder")
    conf = {"builders": ["https://github.com/actions/*"]}
    assert judged(require_provenance, conf, _built(_build(), evil)) == []  # the trusted statement stands alone
    [message] = judged(require_provenance, conf, _built(_build(builder="https://evil.example/builder")))
    assert "was built by https://evil.example/builder, not one of https://github.com/actions/*" in message


def test_a_sbom_for_one_platform_leaves_the_other_without() -> None:
    platforms = {"linux/amd64": AMD64, "linux/arm64": ARM64}
    arm = entry(Evidence("now", sboms=(Sbom("https://spdx.dev/Document", ELSEWHERE, 3, ARM64),)), platforms)
    [message] = judged(require_sbom, {}, arm)
    assert message.endswith("no SBOM describes the linux/amd64 image")


# --- the policy and the lockfile --------------------------------------------------------------------------


def test_a_signature_rule_that_names_nobody_is_refused_when_the_policy_is_loaded(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules:\n  require-signature: error\n")
    with pytest.raises(PolicyError, match=r"rules\.require-signature: names no `keys` and no `identities`: "
                                          r"it would trust no signature"):
        load([policy])
    policy.write_text("rules:\n  require-signature: {level: 'off'}\n")
    load([policy])  # off, it trusts nothing and says nothing
    policy.write_text("rules:\n  require-signature: {level: error, identities: ['https://github.com/acme/*']}\n")
    assert load([policy]).rules["require-signature"]["identities"] == ["https://github.com/acme/*"]
    assert load([policy]).rules["require-signature"]["signed-repository"] == "locked"  # the safe reading
    policy.write_text("rules:\n  require-signature: {level: error, keys: [k], signed-repository: anywhere}\n")
    with pytest.raises(PolicyError, match=r"signed-repository: expected one of locked, any, got 'anywhere'"):
        load([policy])


def test_the_lockfile_keeps_each_subject_and_why_a_statement_failed() -> None:
    evidence = Evidence("2026-11-30T00:00:00Z",
                        (_build(signed=False, problem="none of the 1 trusted cosign keys verifies its signature"),),
                        (_by_key(AMD64),),
                        (Sbom("https://spdx.dev/Document", ELSEWHERE, 3, ARM64),), unread="2 layers left unread")
    lock = Lock().with_entries([entry(evidence)])
    text = lockfile.dumps(lock)
    assert f'subject = "{AMD64}"' in text and 'provenance_unread = "2 layers left unread"' in text
    assert lockfile.loads(text) == lock


def test_the_lockfile_keeps_the_image_a_signature_names_and_reads_locks_recorded_before_it() -> None:
    evidence = Evidence("2026-11-30T00:00:00Z", signatures=(_by_key(AMD64, EVIL), _by_key(ARM64, "")))
    lock = Lock().with_entries([entry(evidence)])
    text = lockfile.dumps(lock)
    assert f'reference = "{EVIL}"' in text and 'reference = ""' in text
    assert lockfile.loads(text) == lock
    older = lockfile.loads(text.replace(f'reference = "{EVIL}", ', "").replace('reference = "", ', ""))
    recorded = older.get(NAME, TAG)
    assert recorded is not None and recorded.evidence is not None and recorded.evidence.outdated
    assert {s.reference for s in recorded.evidence.signatures} == {None}


@pytest.mark.parametrize(("field", "value", "problem"), [
    ("subject", '"sha256:../../etc"', "signatures[0].subject: 'sha256:../../etc' is not sha256:"),
    ("subject", "7", "signatures[0]: subject: expected a string, got an integer"),
])
def test_a_recorded_subject_is_checked_like_any_digest(field: str, value: str, problem: str) -> None:
    evidence = Evidence("2026-11-30T00:00:00Z", signatures=(_by_key(AMD64),))
    text = lockfile.dumps(Lock().with_entries([entry(evidence)])).replace(f'{field} = "{AMD64}"', f"{field} = {value}")
    with pytest.raises(LockfileError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        lockfile.loads(text)
