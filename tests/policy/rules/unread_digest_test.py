"""unread-digest: a Helm values `digest:` the chart's templates never read is reported where it is written."""
from __future__ import annotations

from pathlib import Path

from pinguard.lock.lockfile import Lock
from pinguard.policy.rules import unread_digest
from pinguard.policy.rules.common import Context
from pinguard.scan.paths import scan_paths
from tests.helm.chartfiles import BLOCK, write_chart

WRITTEN = "sha256:" + "1" * 64
BY_TAG = "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}"


def _messages(folder: Path) -> list[tuple[int, int, str]]:
    """The rule's findings over the chart's values.yaml, read without Helm, as (line, column, message)."""
    (found,) = scan_paths([str(folder / "values.yaml")]).found
    context = Context(Lock(), "pinguard.lock")
    return [(p.line, p.column, p.message) for p in unread_digest.check(unread_digest.DEFAULT, found, context)]


def test_a_digest_the_templates_never_read_is_reported_at_the_digest(tmp_path: Path) -> None:
    write_chart(tmp_path, BY_TAG, BLOCK + f"  digest: {WRITTEN}\n")
    [(line, column, message)] = _messages(tmp_path)
    assert (line, column) == (4, 11)  # the digest's value, not the image block
    assert "the chart's templates do not read this digest" in message
    assert "by tag: run `pinguard pin" in message


def test_a_digest_the_templates_read_passes(tmp_path: Path) -> None:
    write_chart(tmp_path, "image: {{ .Values.image.repository }}@{{ .Values.image.digest }}",
                BLOCK + f"  digest: {WRITTEN}\n")
    assert _messages(tmp_path) == []


def test_a_block_without_a_digest_passes(tmp_path: Path) -> None:
    write_chart(tmp_path, BY_TAG, BLOCK)
    assert _messages(tmp_path) == []


def test_a_tag_already_pinned_is_told_to_drop_the_misleading_field(tmp_path: Path) -> None:
    pinned = "sha256:" + "2" * 64
    write_chart(tmp_path, BY_TAG, BLOCK.replace("'1.25'", f"'1.25@{pinned}'") + f"  digest: {WRITTEN}\n")
    [(_, _, message)] = _messages(tmp_path)
    assert f"pulled as docker.io/library/nginx:1.25@{pinned}, pinned in its tag: remove this field" in message
