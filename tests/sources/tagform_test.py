"""References whose tag is a value of its own: the digest goes into the tag, so name and tag join into a pin."""
from __future__ import annotations

import pytest
from yaml.nodes import MappingNode, ScalarNode

from pinguard.sources.base import Found
from pinguard.sources.tagform import TAG_KEYS, image_mappings, split_reference
from pinguard.sources.yamlnodes import Located, compose, mapping_get
from pinguard.write.edits import apply, pin_edit

DIGEST = "sha256:" + "d" * 64
OLD = "sha256:" + "a" * 64


def _split(text: str, tag_keys: tuple[str, ...] = TAG_KEYS) -> Found | None:
    (document,) = compose(text)
    image = mapping_get(document, "image")
    assert isinstance(document, MappingNode) and isinstance(image, ScalarNode)
    return split_reference(document, image, Located(text, "vars.yaml", "kubernetes"), tag_keys=tag_keys)


@pytest.mark.parametrize(("text", "pinned"), [
    ("image: debian\ntag: '9.1'\n", f"image: debian\ntag: '9.1@{DIGEST}'\n"),
    ("image: debian\nimageTag: 9.1\n", f"image: debian\nimageTag: 9.1@{DIGEST}\n"),
    (f"image: debian\ntag: 9.1@{OLD}\n", f"image: debian\ntag: 9.1@{DIGEST}\n"),  # the digest there is replaced
    ("{image: debian, tag: 9.1}\n", f'{{image: debian, tag: "9.1@{DIGEST}"}}\n'),  # quoted: one scalar to any parser
])
def test_the_digest_is_written_into_the_tag(text: str, pinned: str) -> None:
    found = _split(text)
    assert found is not None and found.value == "debian" and found.line == 1
    assert apply(text, [pin_edit(found, DIGEST)]) == pinned
    again = _split(pinned)
    assert again is not None and str(again.reference) == f"docker.io/library/debian:9.1@{DIGEST}"


@pytest.mark.parametrize(("text", "problem"), [
    ("image: debian\ntag: '{{ .Values.tag }}'\n", "templated tag '{{ .Values.tag }}' cannot be resolved"),
    ("image: debian\ntag: ''\n", "its tag (line 2) is empty: whatever reads it decides"),
    ("image: debian\ntag: |\n  9.1\n", "its tag is not a plain or quoted value; pinguard cannot edit it"),
    ("image: debian\ntag: 'Bad Tag'\n", "debian:Bad Tag: invalid reference"),
])
def test_a_tag_that_cannot_be_pinned_says_why(text: str, problem: str) -> None:
    found = _split(text)
    assert found is not None and found.reference is None and (found.problem or "").startswith(problem)


def test_the_first_tag_key_in_order_is_the_tag_and_only_the_keys_asked_for() -> None:
    found = _split("image: debian\nversion: '1'\ntag: '2'\n")
    assert found is not None and str(found.reference) == "docker.io/library/debian:2"  # `tag` before `version`
    assert _split("image: debian\nversion: '1'\n", tag_keys=("tag",)) is None


@pytest.mark.parametrize(("text", "found"), [
    ("image:\n  repository: nginx\n  tag: '1.25'\n", [(2, "nginx", "docker.io/library/nginx:1.25")]),
    ("app:\n  image: {registry: quay.io, repository: org/app, tag: v1}\n", [(2, "org/app", "quay.io/org/app:v1")]),
    ("image:\n  repository: nginx\n", []),  # no tag: whatever reads it decides
    ("image:\n  name: nginx\n  tag: '1.25'\n", []),  # not named by `repository`
    ("images:\n  repository: nginx\n  tag: '1.25'\n", []),  # under another key
])
def test_an_image_mapping_of_repository_and_tag_is_one_reference(text: str,
                                                                 found: list[tuple[int, str, str]]) -> None:
    (document,) = compose(text)
    items = image_mappings(document, Located(text, "vars.yaml", "kubernetes"))
    assert [(item.line, item.value, str(item.reference)) for item in items] == found
    for item in items:  # pinned in the tag form
        assert item.digest_field is not None
        pinned = apply(text, [pin_edit(item, "sha256:" + "a" * 64)])
        assert f"{'1.25' if 'nginx' in text else 'v1'}@sha256:{'a' * 64}" in pinned
