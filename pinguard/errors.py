"""The one family of expected errors.

`cli.main` turns any `PinguardError` into its lines on stderr and status 2;
anything else is a bug and keeps its traceback. The core raises them and never
prints an error itself.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence


class PinguardError(Exception):
    """An error the user can act on; its text is the whole message.

    One that several failures lead to (references that did not resolve, files that did not
    parse) carries them as `details`, a line each, and its message says what came of them:
    `PinguardError("pinguard.lock left unchanged", details=["redis:7.2: 7.2 not found"])`.
    """

    def __init__(self, message: str, *, details: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.details = tuple(details)


class InvalidReference(PinguardError):
    """An image reference that does not follow the docker/OCI grammar."""


class RegistryError(PinguardError):
    """A registry answered wrongly, not at all, or refused us."""


class NotFound(RegistryError):
    """The repository, tag or digest does not exist (or is hidden from us)."""


class DigestMismatch(RegistryError):
    """Bytes served did not hash to the digest they were served under."""


class DeadlinePassed(RegistryError):
    """The run's deadline (--timeout) came before a request to `registry` could be sent."""

    def __init__(self, registry: str, message: str) -> None:
        super().__init__(message)
        self.registry = registry


def deadline_lines(errors: Iterable[object], total: int, left: str) -> list[str]:
    """One line per registry the run's deadline cut short, however many items it left `left` (of `total`)."""
    late: dict[str, list[DeadlinePassed]] = {}
    for error in errors:
        if isinstance(error, DeadlinePassed):
            late.setdefault(error.registry, []).append(error)
    return [f"{cut[0]}; {len(cut)} of {total} {left}" for cut in late.values()]
