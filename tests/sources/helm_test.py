"""Helm values: where a digest is pinned depends on what the chart at hand renders.

The fixtures under tests/testdata/charts are whole charts: `values.yaml` pins to
`values.golden.yaml`, and `values.yaml.scan` is the exact `pinguard scan` output.
"""
from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.read.paths import scan_paths
from pinguard.sources.charts import chart_at_hand
from testing.lockdata import lock_for, locked_test_digest

CHARTS = Path(__file__).parent.parent / "testdata" / "charts"
NGINX = locked_test_digest("docker.io/library/nginx", "1.25")


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _locked(*paths: str) -> None:
    lockfile.write(Path("pinguard.lock"), lock_for(scan_paths(list(paths)).found))


@pytest.mark.parametrize("chart", ["reads-digest", "ignores-digest"])
def test_a_chart_at_hand_decides_where_the_digest_goes(chart: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / chart
    shutil.copytree(CHARTS / chart, work, ignore=shutil.ignore_patterns("*.golden.*", "*.scan"))
    monkeypatch.chdir(work)
    _locked("values.yaml")
    assert _run("scan", "values.yaml")[1] == (CHARTS / chart / "values.yaml.scan").read_text()
    assert _run("pin", "values.yaml")[:1] == (0,)
    assert Path("values.yaml").read_bytes() == (CHARTS / chart / "values.golden.yaml").read_bytes()
    assert _run("pin", "--dry-run", "values.yaml")[:2] == (0, "")


def test_a_digest_the_chart_ignores_is_reported_and_never_counted(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(CHARTS / "ignores-digest", tmp_path / "api", ignore=shutil.ignore_patterns("*.golden.*", "*.scan"))
    monkeypatch.chdir(tmp_path / "api")
    _locked("values.yaml")
    status, out, _ = _run("check", "values.yaml")
    assert status == 1
    assert "values.yaml:2:15: error: `ghcr.io/acme/api` has no digest" in out  # the written digest counts for nothing
    assert "values.yaml:5:11: error: the chart's templates do not read this digest of `ghcr.io/acme/api`; " \
           "it is pulled as ghcr.io/acme/api:2.4.1, by tag" in out
    _run("pin", "values.yaml")
    status, out, _ = _run("check", "values.yaml")
    assert "[unpinned]" not in out
    assert "pinned in its tag: remove this field" in out  # still misleading; pin changes no byte but the tag


def test_a_values_file_below_the_chart_belongs_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(CHARTS / "ignores-digest", tmp_path / "api")
    monkeypatch.chdir(tmp_path / "api")
    (found,) = scan_paths(["ci/smoke-values.yaml"]).found
    assert found.digest_field is not None and found.digest_field.prefix == "@"  # the tag form


def _chart(root: Path, template: str, values: str, chart: str = "apiVersion: v2\nname: app\nversion: 1.0.0\n") -> None:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text(chart)
    (root / "templates" / "deployment.yaml").write_text(template)
    (root / "values.yaml").write_text(values)


BLOCK = "image:\n  repository: nginx\n  tag: '1.25'\n"


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
    _chart(tmp_path, template, BLOCK)
    chart = chart_at_hand(str(tmp_path / "values.yaml"))
    assert chart is not None
    assert chart.reads(("image",), "digest") is reads
    (found,) = scan_paths([str(tmp_path / "values.yaml")]).found
    assert found.digest_field is not None
    assert (found.digest_field.prefix == "@") is not reads


def test_a_block_handed_to_a_library_not_at_hand_is_the_users_call(tmp_path: Path) -> None:
    # bitnami/charts keeps `common` as a dependency fetched at build time, not under charts/.
    written = "sha256:" + "1" * 64
    _chart(tmp_path, 'image: {{ include "common.images.image" (dict "imageRoot" .Values.image) }}',
           BLOCK + f"  digest: {written}\nsidecar:\n" + BLOCK.replace("image:", "  image:").replace("\n  ", "\n    "))
    chart = chart_at_hand(str(tmp_path / "values.yaml"))
    assert chart is not None and chart.reads(("image",), "digest") is None
    image, sidecar = scan_paths([str(tmp_path / "values.yaml")]).found
    assert image.reference is not None and image.reference.digest == written  # trusted, not reported unread
    assert image.unread_digest is None and image.digest_field is not None and image.digest_field.prefix == ""
    assert sidecar.digest_field is not None and sidecar.digest_field.prefix == "@"  # nothing written: the tag form


def test_templates_are_read_again_when_they_change(tmp_path: Path) -> None:
    _chart(tmp_path, "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}", BLOCK)
    values = str(tmp_path / "values.yaml")
    assert not chart_at_hand(values).reads(("image",), "digest")  # type: ignore[union-attr]
    (tmp_path / "templates" / "deployment.yaml").write_text("image: {{ .Values.image.digest }}  # now read")
    assert chart_at_hand(values).reads(("image",), "digest")  # type: ignore[union-attr]


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
    _chart(tmp_path, "kind: Service", "", chart)
    _packaged(tmp_path, "db", "image: {{ .Values.image.repository }}@{{ .Values.image.digest }}")
    _packaged(tmp_path, "cache", "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}")
    found = chart_at_hand(str(tmp_path / "values.yaml"))
    assert found is not None
    assert found.reads(("primary", "image"), "digest") and found.reads(("replica", "image"), "digest")
    assert not found.reads(("db", "image"), "digest")  # used only under its aliases
    assert not found.reads(("cache", "image"), "digest")
    assert not found.reads(("image",), "digest")


def test_a_library_subchart_helper_serves_the_parent(tmp_path: Path) -> None:
    _chart(tmp_path, 'image: {{ include "lib.image" (dict "imageRoot" .Values.image) }}', BLOCK)
    _packaged(tmp_path, "lib", '{{- define "lib.image" -}}{{ .imageRoot.repository }}@{{ .imageRoot.digest }}'
                               '{{- end -}}')
    assert chart_at_hand(str(tmp_path / "values.yaml")).reads(("image",), "digest")  # type: ignore[union-attr]


def test_a_chart_too_large_to_read_is_not_trusted(tmp_path: Path) -> None:
    written = "sha256:" + "1" * 64
    _chart(tmp_path, "image: {{ .Values.image.digest }}\n" + "#" * (2 << 20), BLOCK + f"  digest: {written}\n")
    chart = chart_at_hand(str(tmp_path / "values.yaml"))
    assert chart is not None and chart.reads(("image",), "digest") is False  # it counts as reading nothing
    (found,) = scan_paths([str(tmp_path / "values.yaml")]).found
    assert found.digest_field is not None and found.digest_field.prefix == "@"  # the tag form: safe either way
    assert found.unread_digest is not None  # the digest written is reported, never counted


def test_a_broken_package_is_skipped(tmp_path: Path) -> None:
    _chart(tmp_path, "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}", BLOCK)
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "broken-1.0.0.tgz").write_bytes(b"\x1f\x8b not gzip at all")
    chart = chart_at_hand(str(tmp_path / "values.yaml"))
    assert chart is not None and chart.subcharts == {}


def test_the_policy_says_a_chart_not_at_hand_reads_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("deploy").mkdir()
    Path("deploy/values-prod.yaml").write_text(BLOCK)
    Path("other-values.yaml").write_text(BLOCK)
    Path(".pinguard.yaml").write_text("helm:\n  digest-read: ['deploy/*.yaml']\n")
    _locked(".")
    assert _run("pin", ".")[0] == 0
    assert Path("deploy/values-prod.yaml").read_text() == BLOCK + f"  digest: {NGINX}\n"
    assert Path("other-values.yaml").read_text() == BLOCK.replace("'1.25'", f"'1.25@{NGINX}'")


def test_a_digest_written_in_values_of_a_chart_not_at_hand_is_the_users_pin(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    stale = "sha256:" + "1" * 64
    Path("values.yaml").write_text(BLOCK + f"  digest: {stale}\n")
    (found,) = scan_paths(["values.yaml"]).found
    assert found.reference is not None and found.reference.digest == stale
    _locked("values.yaml")
    _run("pin", "values.yaml")
    assert Path("values.yaml").read_text() == BLOCK + f"  digest: {NGINX}\n"


@pytest.mark.parametrize("policy", ["helm: [x]\n", "helm:\n  digest-read: x\n", "helm:\n  reads: []\n"])
def test_helm_policy_settings_are_validated(policy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path(".pinguard.yaml").write_text(policy)
    status, _, err = _run("scan", ".")
    assert status == 2
    assert "invalid policy .pinguard.yaml: helm" in err


SHA_BLOCK = "image:\n  registry: quay.io\n  repository: brancz/kube-rbac-proxy\n  tag: v0.20.2\n  sha: \"\"\n"
RBAC_PROXY = locked_test_digest("quay.io/brancz/kube-rbac-proxy", "v0.20.2")


@pytest.mark.parametrize(("template", "written"), [
    # prometheus-node-exporter: the chart writes `sha256:` itself
    ("image: {{ .Values.image.registry }}/{{ .Values.image.repository }}:{{ .Values.image.tag }}"
     "@sha256:{{ .Values.image.sha }}", RBAC_PROXY.partition(":")[2]),
    # kube-state-metrics: `printf "%s/%s:%s@%s"` needs the whole digest
    ('image: {{ printf "%s/%s:%s@%s" .Values.image.registry .Values.image.repository .Values.image.tag'
     " .Values.image.sha }}", RBAC_PROXY),
])
def test_sha_holds_what_the_chart_writes_after_the_at(template: str, written: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _chart(tmp_path, template, SHA_BLOCK)
    monkeypatch.chdir(tmp_path)
    _locked("values.yaml")
    _run("pin", "values.yaml")
    assert Path("values.yaml").read_text() == SHA_BLOCK.replace('sha: ""', f'sha: "{written}"')
    (found,) = scan_paths(["values.yaml"]).found
    assert found.reference is not None and found.reference.digest == RBAC_PROXY  # reads back, pinned


def test_a_field_read_only_to_be_refused_is_not_read(tmp_path: Path) -> None:
    # prometheus-node-exporter: `sha` is forbidden in favour of `digest`
    _chart(tmp_path, '{{- if .Values.image.sha }}{{- fail "image.sha forbidden. Use image.digest instead" }}'
                     "{{- end }}\nimage: {{ .Values.image.repository }}:{{ .Values.image.tag }}",
           BLOCK + '  sha: ""\n')
    chart = chart_at_hand(str(tmp_path / "values.yaml"))
    assert chart is not None and chart.reads(("image",), "sha") is False
    (found,) = scan_paths([str(tmp_path / "values.yaml")]).found
    assert found.digest_field is not None and found.digest_field.prefix == "@"


def test_a_block_naming_its_image_with_image_is_one_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ingress-nginx: `{registry, image, tag, digest}`, the digest read through a helper
    values = ("controller:\n  image:\n    registry: registry.k8s.io\n    image: ingress-nginx/controller\n"
              '    tag: "v1.7.0"\n    digest: ""\n')
    _chart(tmp_path, '{{- define "imageDigest" -}}{{- if .digest }}{{ printf "@%s" .digest }}{{- end }}{{- end }}\n'
                     "{{- with .Values.controller.image }}\n"
                     'image: "{{ .registry }}/{{ .image }}:{{ .tag }}{{ include "imageDigest" . }}"\n{{- end }}',
           values)
    monkeypatch.chdir(tmp_path)
    scanned = _run("scan", "values.yaml")[1]
    assert scanned == "values.yaml:4:12: registry.k8s.io/ingress-nginx/controller:v1.7.0 (helm)\n"
    _locked("values.yaml")
    _run("pin", "values.yaml")
    digest = locked_test_digest("registry.k8s.io/ingress-nginx/controller", "v1.7.0")
    assert Path("values.yaml").read_text() == values.replace('digest: ""', f'digest: "{digest}"')
