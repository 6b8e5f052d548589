"""Which files a kustomization reads, and which kustomizations of a scan are built."""
from __future__ import annotations

from pathlib import Path

from pinguard.kustomize.graph import Graph


def test_only_overlays_are_built_and_each_reaches_its_base_patches_and_components(tree: Path) -> None:
    kustomizations = sorted(tree.rglob("kustomization.yaml"))
    graph = Graph()
    tops = {path.relative_to(tree).parent.as_posix() for path in graph.tops(kustomizations)}
    assert tops == {"overlays/images", "overlays/inline-patch", "overlays/json6902", "overlays/replacements",
                    "overlays/components"}
    members = {path.relative_to(tree).as_posix()
               for path in graph.members((tree / "overlays/components/kustomization.yaml").resolve())}
    assert members == {"overlays/components/kustomization.yaml", "base/kustomization.yaml", "base/deployment.yaml",
                       "components/debug/kustomization.yaml", "components/debug/debug.yaml"}
    json6902 = graph.members((tree / "overlays/json6902/kustomization.yaml").resolve())
    assert (tree / "overlays/json6902/set-image.yaml").resolve() in json6902


def test_a_base_scanned_alone_is_built_itself(tree: Path) -> None:
    base = [tree / "base/kustomization.yaml"]
    assert Graph().tops(base) == [base[0].resolve()]


def test_remote_entries_are_named_and_never_followed(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(
        "resources:\n  - github.com/acme/deploy//base?ref=v1\n  - git@github.com:acme/deploy.git\n  - local\n")
    (tmp_path / "local").mkdir()
    kustomization = Graph().kustomization((tmp_path / "kustomization.yaml").resolve())
    assert kustomization is not None
    assert [node.value for node in kustomization.remote] == ["github.com/acme/deploy//base?ref=v1",
                                                             "git@github.com:acme/deploy.git"]
    assert kustomization.bases == ()  # `local` holds no kustomization
