"""Which values line controls a rendered image: found by what Helm prints, later values files winning."""
from __future__ import annotations

from pathlib import Path

from pinguard.helm.trace import Leaf, Leaves, Parts, name_forms

WRITTEN = "sha256:" + "a" * 64
VALUES = f"""\
image:
  repository: bitnami/nginx
  tag: 1.25.3
  digest: {WRITTEN}
sidecar:
  image: busybox:1.36
legacy:
  tag: 1.10
  repository: acme/app
"""
PROD = "image:\n  tag: 1.26.0\n"
LEAVES = Leaves([(Path("values.yaml"), VALUES, ()), (Path("values-prod.yaml"), PROD, ())])


def _where(leaf: Leaf | None) -> tuple[str, int, str] | None:
    """The file, line and key of a leaf."""
    if leaf is None:
        return None
    return leaf.path.name, leaf.where.text.count("\n", 0, leaf.node.start_mark.index) + 1, leaf.key


def test_a_block_is_traced_by_its_tag_and_name_across_the_files_helm_merges() -> None:
    trace = LEAVES.trace("docker.io/bitnami/nginx:1.26.0")
    assert trace is not None and trace.whole is None and trace.rivals == 0
    assert (_where(trace.tag), _where(trace.name), _where(trace.digest)) == (
        ("values-prod.yaml", 2, "tag"), ("values.yaml", 2, "repository"), ("values.yaml", 4, "digest"))
    assert trace.primary is trace.tag and trace.block is trace.tag.block  # type: ignore[union-attr]


def test_a_value_a_later_file_overrides_controls_nothing() -> None:
    trace = LEAVES.trace("docker.io/bitnami/nginx:1.25.3")
    assert trace is not None and trace.tag is None and _where(trace.name) == ("values.yaml", 2, "repository")


def test_a_suffix_the_chart_adds_to_the_tag_still_finds_it() -> None:
    trace = LEAVES.trace("bitnami/nginx:1.26.0-distroless")
    assert trace is not None and _where(trace.tag) == ("values-prod.yaml", 2, "tag")


def test_an_image_written_whole_is_its_own_line() -> None:
    trace = LEAVES.trace("busybox:1.36")
    assert trace is not None and _where(trace.whole) == ("values.yaml", 6, "image") and trace.primary is trace.whole


def test_values_are_matched_as_helm_prints_them() -> None:
    trace = LEAVES.trace("acme/app:1.1")  # `tag: 1.10` unquoted is the number 1.1 to Helm
    assert trace is not None and _where(trace.tag) == ("values.yaml", 8, "tag")
    assert LEAVES.trace("quay.io/other/thing:9") is None


def test_an_image_is_cut_where_its_parts_meet_and_its_name_into_each_run_of_segments() -> None:
    assert Parts.of(f"registry:5000/a/b:1.0@{WRITTEN}") == Parts("registry:5000/a/b", "1.0", WRITTEN)
    assert Parts.of("registry:5000/a/b") == Parts("registry:5000/a/b", "", "")
    assert name_forms("a/b/c") == ["a", "a/b", "a/b/c", "b", "b/c", "c"]
    assert len(name_forms("/".join("x" * 40))) == 16 * 17 // 2  # a hostile path: its last 16 segments
