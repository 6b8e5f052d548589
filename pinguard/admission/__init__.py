"""Admission policies exported from the lock: the cluster admits only images pinned to a locked digest.

Two formats, one module each, both validate-only (nothing is mutated at admission,
so GitOps tools see no drift):

- `vap`: a ValidatingAdmissionPolicy (CEL, no webhook), its binding, and the params
  ConfigMap that holds the locked digests;
- `kyverno`: a Kyverno ClusterPolicy with the digests inline.

A digest counts whether it is the locked index's or one of its platform images'. The
objects are the same for the same lock, namespaces and mode, byte for byte; the YAML
names the lockfile and its sha256 in a comment and in annotations.

Only the standard library, PyYAML and pinguard's own modules: `check` imports this.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pinguard.errors import PinguardError
from pinguard.lockfile import Lock

NAME = "pinguard-lock"  # of the policy, and of the binding and params that cover every namespace
PARAMS_NAMESPACE = "kube-system"  # where the params live: only cluster admins write there
EXEMPT_NAMESPACE = "kube-system"  # left out when no namespace is named: the control plane's own pods
MODES = ("deny", "warn", "audit")
MANAGED_BY = ("app.kubernetes.io/managed-by", "pinguard")
COMPONENT = "app.kubernetes.io/component"
PARAMS_COMPONENT = "admission-params"  # the ConfigMap of locked digests
POLICY_COMPONENT = "admission-policy"  # the policies and bindings
LOCKFILE_ANNOTATION = "pinguard.dev/lockfile"
LOCK_SHA256_ANNOTATION = "pinguard.dev/lock-sha256"
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")  # an RFC 1123 label, as namespaces are
_MAX_NAME = 253


@dataclass(frozen=True)
class Source:
    """The lock being exported and the file it was read from."""

    lock: Lock
    lockfile: str  # as the user named it
    sha256: str  # hex, of the lockfile's bytes: `sha256sum pinguard.lock` says the same

    def digests(self) -> set[str]:
        """Every digest the lock vouches for: each entry's index and its platform images."""
        return {digest for entry in self.lock for digest in (entry.digest, *entry.platforms.values())}

    def annotations(self) -> dict[str, str]:
        return {LOCKFILE_ANNOTATION: self.lockfile, LOCK_SHA256_ANNOTATION: self.sha256}


def namespaces(names: Iterable[str]) -> tuple[str, ...]:
    """The namespaces to bind, sorted and once each; a name no namespace can have is a usage error."""
    names = list(names)
    for name in names:
        if not _NAMESPACE.fullmatch(name):
            raise PinguardError(f"--namespace {name!r}: not a namespace name (lowercase letters, digits and '-', "
                                "at most 63)")
    return tuple(sorted(set(names)))


def scope_name(bound: Sequence[str]) -> str:
    """The name of a binding and its params: `pinguard-lock` for every namespace, else the namespaces joined.

    Bindings of other scopes are left alone, so binding one namespace never narrows a
    binding that covers them all. Past the 253 characters a name may have, a hash stands in.
    """
    name = ".".join((NAME, *bound))
    if len(name) <= _MAX_NAME:
        return name
    return f"{NAME}.{hashlib.sha256(name.encode()).hexdigest()[:16]}"


def labels(component: str) -> dict[str, str]:
    return {MANAGED_BY[0]: MANAGED_BY[1], COMPONENT: component}
