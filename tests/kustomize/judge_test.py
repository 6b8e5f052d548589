"""Kustomizations read from what `kubectl kustomize` builds: every image at the line that controls it."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.kustomize.settings import KustomizeSettings
from pinguard.scan.paths import ScanSettings, scan_paths


def _scan(kubectl: str, *paths: str) -> list[tuple[str, int, str | None]]:
    result = scan_paths(list(paths), ScanSettings(kustomize=KustomizeSettings(binary=kubectl)))
    assert result.errors == []
    return [(item.path, item.line, item.rendered) for item in result.found]


@pytest.mark.parametrize(("overlay", "expected"), [
    # an inline strategic merge patch: the line inside the block scalar
    ("inline-patch", [("overlays/inline-patch/kustomization.yaml", 14, "python:3.12")]),
    # a JSON 6902 patch file: `op: replace`, `value: python:3.11`
    ("json6902", [("overlays/json6902/set-image.yaml", 3, "python:3.11")]),
    # replacements copy a ConfigMap's value into the container
    ("replacements", [("overlays/replacements/images.yaml", 6, "redis:7.2")]),
    # a component's patch replaces the init container's image (the component is scanned too)
    ("components", [("components/debug/debug.yaml", 10, "alpine:3.20")]),
    # `images:` entries: newName and newTag, and newTag with a digest
    ("images", [("overlays/images/kustomization.yaml", 6, "ghcr.io/acme/nginx:1.27"),
                ("overlays/images/kustomization.yaml", 8,
                 "busybox:1.37@sha256:1111111111111111111111111111111111111111111111111111111111111111")]),
])
def test_each_image_the_overlay_changes_is_found_where_the_overlay_changes_it(
        overlay: str, expected: list[tuple[str, int, str]], kubectl: str, tree: Path) -> None:
    found = _scan(kubectl, f"overlays/{overlay}", *(["components"] if overlay == "components" else []))
    assert [item for item in found if item[0].startswith(("overlays/", "components/")) and item[1] > 1] == expected
    # What the base writes and the overlay keeps is found too: at the overlay, since the base is not scanned.
    kept = [item for item in found if item[0] == f"overlays/{overlay}/kustomization.yaml" and item[1] == 1]
    assert {image for _, _, image in kept} <= {"nginx:1.25", "busybox:1.36", "alpine:3.19"} and kept


def test_only_overlays_are_built_and_what_the_base_writes_is_found_in_the_base(kubectl: str, tree: Path) -> None:
    found = _scan(kubectl, ".")
    assert [item for item in found if item[0] == "base/deployment.yaml"] == [
        ("base/deployment.yaml", 14, "alpine:3.19"), ("base/deployment.yaml", 17, "nginx:1.25"),
        ("base/deployment.yaml", 19, "busybox:1.36")]
    # busybox:1.36 is replaced in the json6902 and inline-patch overlays: the static reading of the base is unused
    assert all(item[2] is not None for item in found)


def test_a_remote_resource_is_reported_at_its_line_and_nothing_is_built(kubectl: str, tree: Path) -> None:
    remote = tree / "overlays" / "remote"
    remote.mkdir()
    (remote / "kustomization.yaml").write_text(
        "resources:\n  - ../../base\n  - https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5\n")
    result = scan_paths(["overlays/remote"], ScanSettings(kustomize=KustomizeSettings(binary=kubectl)))
    problems = [(item.line, item.needs_kustomize, item.problem) for item in result.found]
    assert (3, True, "the remote resource 'https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5'"
            " is fetched at build time: vendor it into the repository to check and pin it") in problems
    assert any(line == 1 and problem and "which pinguard never fetches" in problem for line, _, problem in problems)
