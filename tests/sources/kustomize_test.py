"""kustomization.yaml `images:`: `newName` (else `name`) at `newTag`, pinned in `digest`."""
from __future__ import annotations

from pinguard.sources import kustomize
from pinguard.write.edits import apply, pin_edit

DIGEST = "sha256:" + "d" * 64
KUSTOMIZATION = f"""\
images:
  - name: nginx
    newTag: 1.25.3
  - name: redis
    newName: ghcr.io/acme/redis
    newTag: "7.2"
    digest: sha256:{"a" * 64}
  - name: busybox
    newName: busybox2
  - name: app
    newTag: ${{TAG}}
"""


def test_entries_with_a_tag_are_references_and_the_rest_are_left_to_the_manifests() -> None:
    found = kustomize.find("kustomization.yaml", KUSTOMIZATION).found
    assert [(f.value, f.line, f.column, str(f.reference) if f.reference else f.problem) for f in found] == [
        ("nginx", 2, 11, "docker.io/library/nginx:1.25.3"),
        ("ghcr.io/acme/redis", 5, 14, f"ghcr.io/acme/redis:7.2@sha256:{'a' * 64}"),  # `newName` over `name`
        ("app", 10, 11, "templated value app:'${TAG}' cannot be resolved"),
    ]  # busybox: no `newTag`, the tag is the patched manifests'


def test_pinning_adds_the_digest_after_the_tag_or_replaces_the_one_written() -> None:
    found = kustomize.find("kustomization.yaml", KUSTOMIZATION).found
    pinned = apply(KUSTOMIZATION, [pin_edit(item, DIGEST) for item in found if item.reference is not None])
    assert pinned == KUSTOMIZATION.replace("newTag: 1.25.3\n", f"newTag: 1.25.3\n    digest: {DIGEST}\n").replace(
        f"digest: sha256:{'a' * 64}", f"digest: {DIGEST}")
    assert [str(f.reference) for f in kustomize.find("kustomization.yaml", pinned).found[:2]] == [
        f"docker.io/library/nginx:1.25.3@{DIGEST}", f"ghcr.io/acme/redis:7.2@{DIGEST}"]


def test_a_name_written_with_escapes_is_reported_not_pinned() -> None:
    (found,) = kustomize.find("kustomization.yaml", 'images:\n  - name: "ngi\\x6ex"\n    newTag: "1.25"\n').found
    assert found.reference is None and found.line == 2 and "written with escapes" in (found.problem or "")
