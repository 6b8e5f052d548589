"""What signatures are verified against, from the policy: apart from the evidence records, so that
the commands that only carry it (every online command) load none of them."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Trust:
    """What signatures are verified against: files the user names, so verification works offline.

    Notation keeps two trust stores, as Notation does: CAs, for the `notary.x509` scheme, whose
    certificates must be valid now; signing authorities, for `notary.x509.signingAuthority`, the only
    ones whose word for when they signed (the authentic signing time) is taken.
    """

    keys: tuple[Path, ...] = ()  # PEM public keys (ECDSA P-256, Ed25519, RSA) for cosign key-based signatures
    trusted_root: Path | None = None  # a Sigstore trusted_root.json, for keyless bundles
    notation_certs: tuple[Path, ...] = field(default_factory=tuple)  # PEM CA certificates for Notation
    notation_authorities: tuple[Path, ...] = ()  # PEM certificates of Notation signing authorities
