"""Provenance: who built a locked image, from what source, whether it is signed, what its SBOM says.

- `model`: what is recorded per lock entry (standard library only: offline rules read it);
- `discovery`: finding the artifacts that refer to a digest (OCI referrers API, the
  cosign tag scheme, BuildKit attestation manifests inside the index);
- `statements`: reading in-toto statements (SLSA provenance, SBOMs);
- `signatures`: verifying cosign key-based and Notation signatures; `bundles`: Sigstore bundles.
"""
