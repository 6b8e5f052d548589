"""require-signature: each platform image (or its index) carries a verified signature by a signer the policy names."""
from __future__ import annotations

from typing import Any

from pinguard.policy.rules import require_signature
from pinguard.provenance.evidence import Evidence, Signature
from tests.policy.rules.evidence_helpers import AMD64, ARM64, CHECKED, INDEX, NAME, entry, judged

KEY, OTHER_KEY = "sha256:" + "1" * 64, "sha256:" + "2" * 64
ACME = "https://github.com/acme/trainer/.github/workflows/release.yml@refs/heads/main"
GITHUB = "https://token.actions.githubusercontent.com"
BY_KEY = {"keys": [KEY]}


def _signed(conf: dict[str, Any], *signatures: Signature, platforms: dict[str, str] | None = None) -> list[str]:
    return judged(require_signature, conf, entry(Evidence(CHECKED, signatures=signatures), platforms))


def _cosign(subject: str, key: str = KEY, reference: str | None = NAME, verified: bool = True) -> Signature:
    return Signature("cosign", key, None, verified, None if verified else "bad signature", subject, reference)


def test_a_policy_that_names_no_signer_is_refused() -> None:
    assert require_signature.conf_problem(dict(require_signature.DEFAULT)) is not None
    assert require_signature.conf_problem({**require_signature.DEFAULT, **BY_KEY}) is None


def test_a_trusted_key_on_the_index_covers_every_platform() -> None:
    assert _signed(BY_KEY, _cosign(INDEX), platforms={"linux/amd64": AMD64, "linux/arm64": ARM64}) == []


def test_one_platform_signed_leaves_the_other_named() -> None:
    [message] = _signed(BY_KEY, _cosign(AMD64), platforms={"linux/amd64": AMD64, "linux/arm64": ARM64})
    assert "linux/arm64" in message and "linux/amd64" not in message


def test_an_unsigned_image_says_when_it_was_looked_at() -> None:
    [message] = _signed(BY_KEY)
    assert "had no signature" in message and CHECKED in message


def test_an_untrusted_key_or_a_failed_signature_does_not_count() -> None:
    [untrusted] = _signed(BY_KEY, _cosign(INDEX, key=OTHER_KEY))
    assert f"cosign {OTHER_KEY}" in untrusted and "which the policy does not trust" in untrusted
    [failed] = _signed(BY_KEY, _cosign(INDEX, verified=False))
    assert "verified (cosign: bad signature)" in failed


def test_a_cosign_signature_must_name_the_locked_repository_unless_any_is_allowed() -> None:
    [message] = _signed(BY_KEY, _cosign(INDEX, reference="docker.io/evil/other"))
    assert "name docker.io/evil/other, not ghcr.io/acme/trainer" in message
    assert _signed({**BY_KEY, "signed-repository": "any"}, _cosign(INDEX, reference="docker.io/evil/other")) == []


def test_keyless_signatures_count_by_identity_and_issuer() -> None:
    keyless = Signature("sigstore", ACME, GITHUB, True, subject=INDEX)
    assert _signed({"identities": ["https://github.com/acme/*"]}, keyless) == []
    assert _signed({"identities": ["https://github.com/acme/*"], "issuers": [GITHUB]}, keyless) == []
    assert _signed({"identities": ["https://github.com/acme/*"], "issuers": ["https://other.example"]}, keyless)
    assert _signed(BY_KEY, keyless)  # a key named trusts no keyless signature
