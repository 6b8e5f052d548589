"""The SARIF schema, for the tests of every writer that writes SARIF."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SCHEMA = Path(__file__).resolve().parents[1] / "testdata" / "schemas" / "sarif-schema-2.1.0.json"  # OASIS


@pytest.fixture(scope="module")
def validate() -> Callable[[dict[str, Any]], None]:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    validator.check_schema(schema)

    def check(log: dict[str, Any]) -> None:
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
        assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)

    return check
