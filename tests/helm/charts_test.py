"""What a chart's templates read of its values, read from their text; and each chart read once a scan."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from pinguard.helm import charts
from pinguard.helm.charts import Chart, ChartCache, chart_root, helm_text
from pinguard.scan.paths import scan_paths
from pinguard.sources.yamlnodes import compose
from tests.helm.chartfiles import BLOCK, write_chart

TAG_ONLY = "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}"
DIGEST_READ = "image: {{ .Values.image.repository }}@{{ .Values.image.digest }}"


def _read(root: Path) -> Chart:
    chart = ChartCache().chart_at_hand(str(root / "values.yaml"))
    assert chart is not None
    return chart


@pytest.mark.parametrize(("template", "reads"), [
    ("image: {{ .Values.image.repository }}@{{ .Values.image.digest }}", True),
    ("image: {{ $.Values.image.repository }}{{ if $.Values.image.digest }}@{{ $.Values.image.digest }}{{ end }}", True),
    ('image: {{ index .Values "image" "repository" }}@{{ index .Values "image" "digest" }}', True),
    ("{{- with .Values.image }}\nimage: {{ .repository }}@{{ .digest }}\n{{- end }}", True),
    ("{{- $img := .Values.image }}\nimage: {{ $img.repository }}@{{ $img.digest }}", True),
    ('{{- define "img" }}{{ .repository }}@{{ .digest }}{{ end }}\nimage: {{ include "img" .Values.image }}', True),
    ('{{- define "outer" }}{{ include "inner" . }}{{ end }}{{- define "inner" }}{{ .r.digest }}{{ end }}\n'
     'image: {{ include "outer" (dict "r" .Values.image) }}', True),
    ("image: {{ .Values.image.repository }}:{{ .Values.image.tag }}", False),
    ("{{- with .Values.image }}\nimage: {{ .repository }}:{{ .tag }}\n{{- end }}\n{{ .Values.other.digest }}", False),
    ('{{- define "img" }}{{ .repository }}:{{ .tag }}{{ end }}\nimage: {{ include "img" .Values.image }}\n'
     '{{- define "unrelated" }}{{ .digest }}{{ end }}', False),
    ("image: {{ .Values.image | toYaml }}", False),  # rendered as it stands: no helper reads its digest
])
def test_what_the_templates_read(template: str, reads: bool, tmp_path: Path) -> None:
    write_chart(tmp_path, template, BLOCK)
    assert _read(tmp_path).reads(("image",), "digest") is reads
    (found,) = scan_paths([str(tmp_path / "values.yaml")]).found
    assert found.digest_field is not None
    assert (found.digest_field.prefix == "@") is not reads


def test_a_block_handed_to_a_library_not_at_hand_is_the_users_call(tmp_path: Path) -> None:
    # bitnami/charts keeps `common` as a dependency fetched at build time, not under charts/.
    written = "sha256:" + "1" * 64
    write_chart(tmp_path, 'image: {{ include "common.images.image" (dict "imageRoot" .Values.image) }}',
           BLOCK + f"  digest: {written}\nsidecar:\n" + BLOCK.replace("image:", "  image:").replace("\n  ", "\n    "))
    assert _read(tmp_path).reads(("image",), "digest") is None
    image, sidecar = scan_paths([str(tmp_path / "values.yaml")]).found
    assert image.reference is not None and image.reference.digest == written  # trusted, not reported unread
    assert image.unread_digest is None and image.digest_field is not None and image.digest_field.prefix == ""
    assert sidecar.digest_field is not None and sidecar.digest_field.prefix == "@"  # nothing written: the tag form


def _packaged(folder: Path, name: str, template: str) -> None:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        for member, text in ((f"{name}/Chart.yaml", f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
                             (f"{name}/templates/deployment.yaml", template)):
            info = tarfile.TarInfo(member)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    (folder / "charts").mkdir(exist_ok=True)
    (folder / "charts" / f"{name}-0.1.0.tgz").write_bytes(data.getvalue())


def test_packaged_subcharts_read_their_values_under_name_or_alias(tmp_path: Path) -> None:
    chart = "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: db\n  alias: primary\n- name: db\n" \
            "  alias: replica\n- name: cache\n"
    write_chart(tmp_path, "kind: Service", "", chart)
    _packaged(tmp_path, "db", "image: {{ .Values.image.repository }}@{{ .Values.image.digest }}")
    _packaged(tmp_path, "cache", "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}")
    found = _read(tmp_path)
    assert found.reads(("primary", "image"), "digest") and found.reads(("replica", "image"), "digest")
    assert not found.reads(("db", "image"), "digest")  # used only under its aliases
    assert not found.reads(("cache", "image"), "digest")
    assert not found.reads(("image",), "digest")


def test_a_library_subchart_helper_serves_the_parent(tmp_path: Path) -> None:
    write_chart(tmp_path, 'image: {{ include "lib.image" (dict "imageRoot" .Values.image) }}', BLOCK)
    _packaged(tmp_path, "lib", '{{- define "lib.image" -}}{{ .imageRoot.repository }}@{{ .imageRoot.digest }}'
                               '{{- end -}}')
    assert _read(tmp_path).reads(("image",), "digest")


def test_a_chart_too_large_to_read_is_not_trusted(tmp_path: Path) -> None:
    written = "sha256:" + "1" * 64
    write_chart(tmp_path, "image: {{ .Values.image.digest }}\n" + "#" * (2 << 20), BLOCK + f"  digest: {written}\n")
    assert _read(tmp_path).reads(("image",), "digest") is False  # it counts as reading nothing
    (found,) = scan_paths([str(tmp_path / "values.yaml")]).found
    assert found.digest_field is not None and found.digest_field.prefix == "@"  # the tag form: safe either way
    assert found.unread_digest is not None  # the digest written is reported, never counted


def test_a_broken_package_is_skipped(tmp_path: Path) -> None:
    write_chart(tmp_path, "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}", BLOCK)
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "broken-1.0.0.tgz").write_bytes(b"\x1f\x8b not gzip at all")
    assert _read(tmp_path).subcharts == {}


def test_a_field_read_only_to_be_refused_is_not_read(tmp_path: Path) -> None:
    # prometheus-node-exporter: `sha` is forbidden in favour of `digest`
    write_chart(tmp_path, '{{- if .Values.image.sha }}{{- fail "image.sha forbidden. Use image.digest instead" }}'
                     "{{- end }}\nimage: {{ .Values.image.repository }}:{{ .Values.image.tag }}",
           BLOCK + '  sha: ""\n')
    assert _read(tmp_path).reads(("image",), "sha") is False
    (found,) = scan_paths([str(tmp_path / "values.yaml")]).found
    assert found.digest_field is not None and found.digest_field.prefix == "@"


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders of the charts read from disk from now on, in order."""
    read: list[str] = []
    read_chart = charts._read_chart

    def counted(root: Path) -> Chart | None:
        read.append(root.name)
        return read_chart(root)

    monkeypatch.setattr(charts, "_read_chart", counted)
    return read


def _digest_prefixes(folder: Path) -> list[str]:
    """How each Helm values file under `folder` would be pinned: `@` in the tag, or a `digest:` field."""
    found = [item for item in scan_paths([str(folder)]).found if item.source == "helm"]
    return [item.digest_field.prefix if item.digest_field else "" for item in found]


def test_a_scan_reads_each_chart_once_and_the_next_scan_reads_it_afresh(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    write_chart(tmp_path / "app", TAG_ONLY, BLOCK)
    (tmp_path / "app" / "values-prod.yaml").write_text(BLOCK)
    (tmp_path / "app" / "ci").mkdir()
    (tmp_path / "app" / "ci" / "values.yaml").write_text(BLOCK)
    read = _counting_reads(monkeypatch)
    assert _digest_prefixes(tmp_path) == ["@"] * 3  # the tag form
    assert read == ["app"]  # three values files, one reading of their chart
    (tmp_path / "app" / "templates" / "deployment.yaml").write_text(DIGEST_READ)
    assert _digest_prefixes(tmp_path) == ["  digest: "] * 3  # the chart now reads `digest`: the field is added
    assert read == ["app", "app"]


def test_the_chart_asked_for_least_recently_is_let_go_beyond_the_count(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for name in "abc":
        write_chart(tmp_path / name, TAG_ONLY, BLOCK)
    monkeypatch.setattr(charts, "_CACHED_CHARTS", 2)
    read = _counting_reads(monkeypatch)
    cache = ChartCache()
    first = cache.chart_at_hand(str(tmp_path / "a" / "values.yaml"))
    for name in "bac":
        cache.chart_at_hand(str(tmp_path / name / "values.yaml"))
    assert cache.chart_at_hand(str(tmp_path / "a" / "values.yaml")) is first  # kept: asked for after b
    cache.chart_at_hand(str(tmp_path / "b" / "values.yaml"))
    assert read == ["a", "b", "c", "b"]  # b was let go when c came, and read again


def test_the_charts_kept_are_bounded_by_what_they_were_read_from(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for name in "ab":
        write_chart(tmp_path / name, TAG_ONLY, BLOCK)
    chart_files = [tmp_path / "a" / "Chart.yaml", *(tmp_path / "a" / "templates").iterdir()]
    size = sum(path.stat().st_size for path in chart_files)
    monkeypatch.setattr(charts, "_CACHED_BYTES", size + size // 2)  # one chart, not two
    read = _counting_reads(monkeypatch)
    cache = ChartCache()
    for name in "abba":
        cache.chart_at_hand(str(tmp_path / name / "values.yaml"))
    assert read == ["a", "b", "a"]


def test_a_values_file_belongs_to_the_chart_at_most_two_folders_above(tmp_path: Path) -> None:
    write_chart(tmp_path, TAG_ONLY, BLOCK)
    assert chart_root(str(tmp_path / "values.yaml")) == tmp_path
    assert chart_root(str(tmp_path / "ci" / "values.yaml")) == tmp_path
    assert chart_root(str(tmp_path / "env" / "prod" / "values.yaml")) == tmp_path
    assert chart_root(str(tmp_path / "a" / "b" / "c" / "values.yaml")) is None


@pytest.mark.parametrize(("written", "rendered"), [
    ("1.10", "1.1"),  # a number to go-yaml, printed by Go's %v
    ('"1.10"', "1.10"),  # quoted: a string
    ("20240101", "2.0240101e+07"),  # every number passes through JSON as a float64
    ("1e6", "1e+06"),
    ("0.0001", "0.0001"),
    ("0.00001", "1e-05"),
    ("010", "8"),  # YAML 1.1 octal
    ("0x1F", "31"),
    ("1_000", "1000"),
    ("18446744073709551615", "1.8446744073709552e+19"),
    ("yes", "true"),  # YAML 1.1 booleans
    ("Off", "false"),
    ("v1.2", "v1.2"),
    ("1e400", None),  # beyond a float64: Helm fails to read it
])
def test_what_helm_renders_for_a_scalar(written: str, rendered: str | None) -> None:
    (node,) = compose(written)
    assert helm_text(node) == rendered  # type: ignore[arg-type]
