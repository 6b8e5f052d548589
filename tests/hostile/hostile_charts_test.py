"""Hostile Helm charts beside a values file: what reading their templates costs grows linearly with them, and a
chart beyond the bounds reads nothing, so its images are pinned in the tag form, which works whatever it renders.

Templates once cost time and memory quadratic in their size (an unterminated `{{` searched
to the end from every `{{` after it, each `if`/`with`/`range` searched for its `end`, each
`$x :=` copied the rest of the file); packaged subcharts' folders, links and devices were
free to list.
"""
from __future__ import annotations

import gzip
import io
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pinguard.helm import charts
from pinguard.helm.charts import ChartCache
from pinguard.scan.paths import scan_paths
from testing.costs import cpu_seconds, peak_memory

BLOCK = "image:\n  repository: nginx\n  tag: '1.25'\n"
WRITTEN = "sha256:" + "1" * 64
# Each line opens blocks it never ends, takes the image into a variable, and hands it to a helper.
UNIT = ('{{ if .Values.image.x }}{{ with .Values.image }}{{ $v := .Values.image }}{{ range .Values.image.l }}'
        '{{ include "h" . }}{{ if .Values.image.sha }}{{ fail "no" }}\n')


def _chart(root: Path, template: str, values: str = BLOCK) -> str:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    (root / "templates" / "deployment.yaml").write_text(template)
    (root / "values.yaml").write_text(values)
    return str(root / "values.yaml")


def _hostile(units: int) -> str:
    return UNIT * units + "{{ .Values.image " * units  # ... and ends with actions left open


def _answered(values: str) -> Callable[[], object]:
    def read() -> object:
        chart = ChartCache().chart_at_hand(values)
        assert chart is not None
        return [chart.reads(("image",), "digest"), chart.reads(("image", "x"), "sha")]
    return read


def test_templates_cost_time_and_memory_linear_in_their_size(tmp_path: Path) -> None:
    small = _chart(tmp_path / "small", _hostile(1_500))
    large = _chart(tmp_path / "large", _hostile(6_000))
    size = (tmp_path / "large" / "templates" / "deployment.yaml").stat().st_size
    assert cpu_seconds(_answered(large)) < 8 * max(cpu_seconds(_answered(small)), 0.05)  # 4x the text; quadratic: 16x
    assert peak_memory(_answered(large))[1] < 40 * size  # the text once, a few records an action; never a copy a block


def test_a_question_beyond_the_budget_is_answered_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A helper the chart does not hold would make the answer "nobody can tell", and a digest written be trusted.
    values = _chart(tmp_path, '{{- with .Values.image }}{{ include "library.image" . }}{{ end }}',
                    BLOCK + f"  digest: {WRITTEN}\n")
    assert ChartCache().chart_at_hand(values).reads(("image",), "digest") is None  # type: ignore[union-attr]
    monkeypatch.setattr(charts, "_MAX_WORK", 10)
    chart = ChartCache().chart_at_hand(values)
    assert chart is not None and chart.reads(("image",), "digest") is False
    (found,) = scan_paths([values]).found
    assert found.digest_field is not None and found.digest_field.prefix == "@"  # the tag form
    assert found.unread_digest is not None  # the digest written is reported, never counted


def _package(folder: Path, members: list[tarfile.TarInfo], data: bytes = b"") -> None:
    """charts/sub-1.0.0.tgz holding `members`, then a real subchart reading `.digest`, as a subchart after them."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(data) if member.isfile() else None)
        for name, text in (("sub/Chart.yaml", "apiVersion: v2\nname: sub\nversion: 1.0.0\n"),
                           ("sub/templates/deployment.yaml", "image: {{ .Values.image.digest }}")):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            archive.addfile(info, io.BytesIO(text.encode()))
    (folder / "charts").mkdir(exist_ok=True)
    (folder / "charts" / "sub-1.0.0.tgz").write_bytes(buffer.getvalue())


def _member(name: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = "sub/Chart.yaml" if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
    return info


@pytest.mark.parametrize("kind", [tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.FIFOTYPE],
                         ids=["folders", "symlinks", "hardlinks", "devices", "fifos"])
def test_every_member_of_a_packaged_subchart_counts(kind: bytes, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    values = _chart(tmp_path, "kind: Service", "sub:\n" + BLOCK.replace("\n  ", "\n    ").replace("image:", "  image:"))
    _package(tmp_path, [_member(f"sub/x{number}", kind) for number in range(8_000)])
    assert (tmp_path / "charts" / "sub-1.0.0.tgz").stat().st_size < 1 << 20
    headers = 0
    read_header = tarfile.TarInfo.fromtarfile.__func__  # type: ignore[attr-defined]

    def counted(cls: type[tarfile.TarInfo], archive: tarfile.TarFile) -> tarfile.TarInfo:
        nonlocal headers
        headers += 1
        return read_header(cls, archive)  # type: ignore[no-any-return]

    monkeypatch.setattr(tarfile.TarInfo, "fromtarfile", classmethod(counted))
    chart = ChartCache().chart_at_hand(values)
    assert chart is not None and chart.reads(("sub", "image"), "digest") is False  # beyond the bounds: reads nothing
    assert headers <= charts._MAX_FILES + 2  # it stopped at the budget, not at the end of the archive


@pytest.mark.parametrize("members", [
    [_member("sub/" + "n" * (40 << 20), tarfile.REGTYPE)],  # one name of 40 MiB, in a pax header
    [_member("sub/README.md", tarfile.REGTYPE)],  # a file of 100 MiB of zeros that nobody reads
], ids=["long-name", "large-file"])
def test_what_a_packaged_subchart_unpacks_to_counts(members: list[tarfile.TarInfo], tmp_path: Path) -> None:
    values = _chart(tmp_path, "kind: Service", BLOCK)
    data = b""
    if members[0].name == "sub/README.md":
        members[0].size = 100 << 20
        data = bytes(100 << 20)
    _package(tmp_path, members, data)
    packed = (tmp_path / "charts" / "sub-1.0.0.tgz").read_bytes()
    assert len(packed) < 1 << 20 and len(gzip.decompress(packed)) > charts._MAX_TOTAL_BYTES
    chart, peak = peak_memory(lambda: ChartCache().chart_at_hand(values))
    assert chart is not None and chart.subcharts == {}  # beyond the bounds: the chart reads nothing
    assert peak < 3 * charts._MAX_TOTAL_BYTES
