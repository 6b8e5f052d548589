"""What the command line hands every command, and the defaults of its flags."""
from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from pinguard.commands.options import DEFAULT_LOCKFILE, DEFAULT_PLATFORM, Options
from pinguard.registry.manifest import Platform


def test_options_default_to_the_lockfile_here_an_empty_environment_and_speaking() -> None:
    options = Options(io.StringIO(), io.StringIO())
    assert options.lockfile == DEFAULT_LOCKFILE == Path("pinguard.lock")
    assert options.env == {} and options.quiet is False


def test_options_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Options(io.StringIO(), io.StringIO()).quiet = True  # type: ignore[misc]


def test_the_options_report_on_their_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    Options(out, err).report.error("boom")
    assert err.getvalue() == "pinguard: error: boom\n" and out.getvalue() == ""


def test_the_default_platform_is_one_the_registry_client_parses() -> None:
    assert Platform.parse(DEFAULT_PLATFORM) == Platform("linux", "amd64")
