"""Which line controls an image a kustomization builds: the outermost `images:` entry that makes it, and where a
file writes it whole (never in a comment, never inside a longer name)."""
from __future__ import annotations

from pathlib import Path

import yaml

from pinguard.kustomize.trace import Inputs

DIGEST = "sha256:" + "a" * 64
BASE = Path("base/kustomization.yaml")
OVERLAY = Path("overlays/prod/kustomization.yaml")
DEPLOYMENT = Path("base/deployment.yaml")


def _inputs(kustomizations: dict[Path, str], files: dict[Path, str], scanned: set[Path] | None = None) -> Inputs:
    parsed = [(path, text, list(yaml.compose_all(text, Loader=yaml.SafeLoader))) for path, text in
              kustomizations.items()]
    return Inputs(parsed, list(files.items()), frozenset(scanned if scanned is not None else files))


def test_the_outermost_entry_that_makes_the_image_is_found() -> None:
    inputs = _inputs({OVERLAY: "images:\n  - name: nginx\n    newTag: '1.26'\n",
                      BASE: "images:\n  - name: nginx\n    newTag: '1.25'\n"}, {})
    trace = inputs.trace("nginx:1.26")
    assert trace.entry is not None and trace.entry.path == OVERLAY
    start, end = trace.entry.span()
    assert trace.entry.where.text[start:end] == "1.26"  # the tag, inside its quotes
    assert inputs.trace("nginx:1.27").entry is None  # no entry agrees with what the build made


def test_an_image_written_whole_is_found_outside_comments_and_longer_names() -> None:
    text = "# image: nginx:1.25\nimage: my-nginx:1.25\nimage: nginx:1.25\n"
    written = _inputs({}, {DEPLOYMENT: text}).trace("nginx:1.25").written
    assert written is not None and written.path == DEPLOYMENT and written.value == "nginx:1.25"
    assert written.start == text.rindex("nginx:1.25")


def test_the_files_of_the_scan_are_preferred() -> None:
    outside = Path("remote/deployment.yaml")
    written = _inputs({}, {outside: "image: nginx:1.25\n", DEPLOYMENT: "image: nginx:1.25\n"},
                      scanned={DEPLOYMENT}).trace("nginx:1.25").written
    assert written is not None and written.path == DEPLOYMENT


def test_a_build_showing_only_a_digest_gets_the_tag_a_file_writes() -> None:
    trace = _inputs({}, {DEPLOYMENT: "image: nginx:1.25 # pinned below\n"}).trace(f"nginx@{DIGEST}")
    assert trace.tag == "1.25" and trace.written is None
    assert _inputs({}, {DEPLOYMENT: "image: redis:7\n"}).trace(f"nginx@{DIGEST}").tag is None
