"""What an image manifest needs copied: its config and layers, each with a valid digest and size."""
from __future__ import annotations

import json

import pytest

from pinguard.copy.plan import Blob, image_blobs
from pinguard.errors import RegistryError
from pinguard.registry.manifest import OCI_MANIFEST, ManifestBody

CONFIG = "sha256:" + "c" * 64
LAYER = "sha256:" + "1" * 64


def _manifest(document: object, media_type: str = OCI_MANIFEST) -> ManifestBody:
    return ManifestBody(json.dumps(document).encode(), "sha256:" + "f" * 64, media_type)


def test_the_config_comes_first_then_the_layers() -> None:
    body = _manifest({"config": {"digest": CONFIG, "size": 7}, "layers": [{"digest": LAYER, "size": 0}]})
    assert image_blobs(body) == (Blob(CONFIG, 7), Blob(LAYER, 0))


def test_docker_schema_1_is_not_copied() -> None:
    body = _manifest({}, "application/vnd.docker.distribution.manifest.v1+prettyjws")
    with pytest.raises(RegistryError, match="Docker schema 1"):
        image_blobs(body)


@pytest.mark.parametrize("document", [
    {"layers": []},
    {"config": {"digest": CONFIG, "size": 1}, "layers": {}},
])
def test_a_manifest_without_a_config_or_a_layer_list_is_refused(document: object) -> None:
    with pytest.raises(RegistryError, match="no config, or its layers are not a list"):
        image_blobs(_manifest(document))


@pytest.mark.parametrize("blob", [
    {"digest": "sha256:short", "size": 1},
    {"digest": LAYER, "size": -1},
    {"digest": LAYER, "size": True},
    {"digest": LAYER, "size": "1"},
    {"size": 1},
    "sha256:" + "1" * 64,
])
def test_a_blob_without_a_valid_digest_and_size_is_refused(blob: object) -> None:
    body = _manifest({"config": {"digest": CONFIG, "size": 1}, "layers": [blob]})
    with pytest.raises(RegistryError, match="without a valid digest and size"):
        image_blobs(body)
