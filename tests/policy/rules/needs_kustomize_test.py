"""needs-kustomize: without kustomize at hand, a kustomization with patches (and the like) is never clean."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock
from pinguard.sources import kustomize

RESOURCE = "kind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: a\n    image: nginx:1.25@sha256:" + \
    "a" * 64 + "\n"


@pytest.mark.parametrize(("kustomization", "line"), [
    ("resources: [pod.yaml]\npatches:\n  - path: p.yaml\n", 2),
    ("resources: [pod.yaml]\npatchesStrategicMerge: [p.yaml]\n", 2),
    ("resources: [pod.yaml]\npatchesJson6902:\n  - path: p.yaml\n", 2),
    ("resources: [pod.yaml]\nreplacements:\n  - path: r.yaml\n", 2),
    ("resources: [pod.yaml]\ncomponents: [../c]\n", 2),
    ("resources:\n  - pod.yaml\n  - https://example.com/app?ref=v1\n", 3),
])
def test_what_only_a_build_shows_is_an_error_without_kustomize(kustomization: str, line: int, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no kubectl, no kustomize
    Path("kustomization.yaml").write_text(kustomization)
    Path("pod.yaml").write_text(RESOURCE)
    Path("pinguard.lock").write_text(lockfile.dumps(Lock()))
    out = io.StringIO()
    code = main(["check", "--policy", "default", "kustomization.yaml"], stdout=out, stderr=io.StringIO())
    assert code == 1
    assert f"kustomization.yaml:{line}:" in out.getvalue() and "[needs-kustomize]" in out.getvalue()


def test_images_entries_alone_are_read_without_kustomize(tmp_path: Path) -> None:
    found = kustomize.find("kustomization.yaml", "images:\n  - name: nginx\n    newTag: '1.27'\n").found
    assert [(item.needs_kustomize, str(item.reference)) for item in found] == [(False, "docker.io/library/nginx:1.27")]


def test_a_local_folder_that_looks_like_a_host_is_not_remote(tmp_path: Path) -> None:
    (tmp_path / "app.v2" / "base").mkdir(parents=True)
    assert not kustomize.is_remote("app.v2/base", tmp_path)
    assert kustomize.is_remote("github.com/acme/app/base?ref=v1", tmp_path)
    assert kustomize.is_remote("gitlab.com/acme/app", tmp_path)
