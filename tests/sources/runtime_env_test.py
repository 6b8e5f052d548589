"""Ray `runtime_env` files, YAML or JSON: `image_uri`, and `image` under `container`."""
from __future__ import annotations

from pinguard.sources import runtime_env


def test_image_uri_and_the_container_image_are_references() -> None:
    text = "image_uri: rayproject/ray:2.9.0-py310\ncontainer:\n  image: anyscale/ray:2.9\nenv_vars:\n  image: data\n"
    found = runtime_env.find("runtime_env.yaml", text).found
    assert [(f.value, f.line, f.column, f.source) for f in found] == [
        ("rayproject/ray:2.9.0-py310", 1, 12, "runtime_env"), ("anyscale/ray:2.9", 3, 10, "runtime_env")]


def test_json_is_read_the_same() -> None:
    (found,) = runtime_env.find("runtime_env.json", '{"pip": ["torch"], "image_uri": "rayproject/ray:2.9.0"}').found
    assert (found.value, found.line, found.column) == ("rayproject/ray:2.9.0", 1, 34)
    assert str(found.reference) == "docker.io/rayproject/ray:2.9.0"
