"""What every object an export writes shares: its name, its labels, the lock it came from.

Only the standard library, PyYAML and pinguard's own modules: `check` imports this.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pinguard.errors import PinguardError
from pinguard.lock.locked import admitted
from pinguard.lock.lockfile import Lock

NAME = "pinguard-lock"  # how the name of every object an export writes begins
PARAMS_NAMESPACE = "kube-system"  # where the params live: only cluster admins write there
EXEMPT_NAMESPACE = "kube-system"  # left out when no namespace is named: the control plane's own pods
MODES = ("deny", "warn", "audit")
MANAGED_BY = ("app.kubernetes.io/managed-by", "pinguard")
COMPONENT = "app.kubernetes.io/component"
PARAMS_COMPONENT = "admission-params"  # the ConfigMap of locked digests
POLICY_COMPONENT = "admission-policy"  # the policies and bindings
KEEPALIVE_COMPONENT = "admission-keepalive"  # what keeps the API server reading params (`keepalive`)
FIELD_MANAGER = "pinguard"  # who server-side applies every object: `run --admission` and the commands pinguard prints
LOCKFILE_ANNOTATION = "pinguard.dev/lockfile"
LOCK_SHA256_ANNOTATION = "pinguard.dev/lock-sha256"
SCOPE_LABEL = "pinguard.dev/scope"  # the export's: `pinguard-lock`, `pinguard-lock.team-a`, ...
LAYOUT_LABEL = "pinguard.dev/layout"  # how the params are split (`params.Layout`): on them and on the bindings
_MAX_LABEL = 63
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")  # an RFC 1123 label, as namespaces are
_MAX_NAME = 253


@dataclass(frozen=True)
class Source:
    """The lock being exported and the file it was read from."""

    lock: Lock
    lockfile: str  # as the user named it
    sha256: str  # hex, of the lockfile's bytes: `sha256sum pinguard.lock` says the same

    def digests(self) -> set[str]:
        """Every digest the lock vouches for: each entry's index and its platform images (`locked.admitted`)."""
        return admitted(self.lock)

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
    """The name of the export that binds `bound`: `pinguard-lock` for every namespace, else the namespaces joined.

    Objects of other scopes are left alone, so binding one namespace never narrows a
    binding that covers them all.
    """
    return object_name(NAME, bound)


def object_name(first: str, bound: Sequence[str]) -> str:
    """`first` then the namespaces bound, joined by `.`; past the 253 characters a name may have, a hash stands
    in for the namespaces. A namespace holds no `.`, so no two (first, namespaces) give one name."""
    name = ".".join((first, *bound))
    return name if len(name) <= _MAX_NAME else _hashed(first, bound)


def labels(component: str, bound: Sequence[str]) -> dict[str, str]:
    """The labels of an object of the export that binds `bound`; the scope hashed past a label value's 63."""
    scope = scope_name(bound)
    return {MANAGED_BY[0]: MANAGED_BY[1], COMPONENT: component,
            SCOPE_LABEL: scope if len(scope) <= _MAX_LABEL else _hashed(NAME, bound)}


def _hashed(first: str, bound: Sequence[str]) -> str:
    return f"{first}.{hashlib.sha256('.'.join(bound).encode()).hexdigest()[:16]}"
