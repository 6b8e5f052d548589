"""The one family of expected errors: what each says, the lines it carries, and which registry a deadline cut."""
from __future__ import annotations

import pytest

from pinguard.errors import (
    DeadlinePassed,
    DigestMismatch,
    InvalidReference,
    NotFound,
    PinguardError,
    RegistryError,
    deadline_lines,
)


@pytest.mark.parametrize("kind", [InvalidReference, RegistryError, NotFound, DigestMismatch])
def test_every_expected_error_is_a_pinguard_error_and_says_only_its_message(kind: type[PinguardError]) -> None:
    error = kind("redis:7.2: not found")
    assert isinstance(error, PinguardError) and str(error) == "redis:7.2: not found" and error.details == ()


def test_registry_errors_are_told_apart_from_bad_references() -> None:
    assert issubclass(NotFound, RegistryError) and issubclass(DigestMismatch, RegistryError)
    assert issubclass(DeadlinePassed, RegistryError) and not issubclass(InvalidReference, RegistryError)


def test_an_error_several_failures_lead_to_carries_them_a_line_each() -> None:
    failures = (line for line in ["redis:7.2: 7.2 not found", "nginx:1.25: timed out"])  # any iterable, kept
    error = PinguardError("pinguard.lock left unchanged", details=list(failures))
    assert str(error) == "pinguard.lock left unchanged"
    assert error.details == ("redis:7.2: 7.2 not found", "nginx:1.25: timed out")


def test_one_line_per_registry_the_deadline_cut_short() -> None:
    late = [DeadlinePassed("ghcr.io", "ghcr.io: the run's deadline passed"),
            NotFound("docker.io/library/redis:7.2: not found"),
            DeadlinePassed("quay.io", "quay.io: the run's deadline passed"),
            DeadlinePassed("ghcr.io", "ghcr.io: the run's deadline passed"),
            None]
    assert deadline_lines(late, 7, "references left unresolved") == [
        "ghcr.io: the run's deadline passed; 2 of 7 references left unresolved",
        "quay.io: the run's deadline passed; 1 of 7 references left unresolved"]
    assert deadline_lines([NotFound("x"), None], 2, "entries left unverified") == []
