"""JSON from outside: every way the bytes fail to be JSON is one ValueError, never a RecursionError."""
from __future__ import annotations

import pytest

from pinguard import untrusted_json


def test_json_is_decoded() -> None:
    assert untrusted_json.loads(b'{"schemaVersion": 2, "layers": [{"size": 1}]}') == {
        "schemaVersion": 2, "layers": [{"size": 1}]}
    assert untrusted_json.loads('"ü"') == "ü"


@pytest.mark.parametrize(("data", "reason"), [
    (b"[" * 100_000, "JSON nested too deeply"),
    (b'{"a": ' * 100_000, "JSON nested too deeply"),
    (b'"\xff\xfe\xfd"', "not UTF-8"),
    (b'{"a": 1', "Expecting"),  # the decoder's own reason
    (b"", "Expecting value"),
])
def test_what_is_not_json_is_a_value_error_with_a_short_reason(data: bytes, reason: str) -> None:
    with pytest.raises(ValueError, match=reason) as raised:
        untrusted_json.loads(data)
    assert not isinstance(raised.value.__cause__, RecursionError) and len(str(raised.value)) < 100
