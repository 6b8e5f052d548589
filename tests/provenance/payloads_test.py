"""Hostile bytes from registries: JSON and base64 read, or refused with a reason naming what they were to be."""
from __future__ import annotations

import pytest

from pinguard.provenance.payloads import (
    MAX_SIGNATURE_BYTES,
    Unreadable,
    Unverified,
    base64_bytes,
    check_signs,
    check_size,
    load_json,
    member,
)

IMAGE = "sha256:" + "a" * 64


def test_json_is_read_or_refused_naming_what_it_was_to_be() -> None:
    assert load_json(b'{"critical": {"image": 1}}', "the payload") == {"critical": {"image": 1}}
    with pytest.raises(Unreadable, match=r"^the payload is nested too deeply$"):
        load_json(b"[" * 100_000, "the payload")
    with pytest.raises(Unreadable, match=r"^the payload is not JSON: "):
        load_json(b"\xff{}", "the payload")
    with pytest.raises(Unreadable, match=r"^the envelope is not JSON: "):
        load_json(b'{"a": ', "the envelope")


def test_member_walks_objects_and_says_none_where_one_is_missing() -> None:
    document = {"critical": {"image": {"docker-manifest-digest": IMAGE}}, "list": [1]}
    assert member(document, "critical", "image", "docker-manifest-digest") == IMAGE
    assert member(document, "critical", "type") is None
    assert member(document, "list", "0") is None  # a list is no object
    assert member("text", "critical") is None


def test_base64_with_or_without_padding_in_either_alphabet() -> None:
    assert base64_bytes("aGk=", "a signature") == base64_bytes("aGk", "a signature") == b"hi"
    assert base64_bytes("-_8", "a JWS part", url=True) == b"\xfb\xff"
    assert base64_bytes("+/8", "a signature") == b"\xfb\xff"
    for text, url, reason in [("+/8", True, "a JWS part is not base64url"), ("a%b", False, "a JWS part is not base64"),
                              (17, False, "a JWS part is not a string")]:
        with pytest.raises(Unreadable, match=f"^{reason}$"):
            base64_bytes(text, "a JWS part", url=url)


def test_a_signature_layer_is_bounded() -> None:
    check_size(bytes(MAX_SIGNATURE_BYTES))
    with pytest.raises(Unreadable, match=f"^{MAX_SIGNATURE_BYTES + 1} bytes is more than a signature layer"):
        check_size(bytes(MAX_SIGNATURE_BYTES + 1))


def test_a_signed_payload_must_name_the_image_it_was_found_for() -> None:
    check_signs(IMAGE, IMAGE)
    other = "sha256:" + "b" * 64
    with pytest.raises(Unverified, match=f"^signs {other}, not this image$"):
        check_signs(other, IMAGE)
    for claimed in (None, "nginx:1.25", {"digest": IMAGE}):
        with pytest.raises(Unverified, match=r"^the signed payload names no image digest$"):
            check_signs(claimed, IMAGE)
