"""Helm values: where a digest is pinned depends on what the chart at hand renders.

The fixtures under tests/testdata/charts are whole charts: `values.golden.yaml` is
`values.yaml` with each digest where the reading says the chart reads it, and
`values.yaml.scan` is the exact `pinguard scan` output. Without Helm nothing is
written into a chart's values (`tests/commands/pin_needs_helm_test.py`): the reading
of a chart's values is what `scan`, `lock` and `check` see, and where a digest goes
is what the reading says (`_placed`), never a write.
"""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.pin.plan import NEEDS_HELM
from pinguard.reference import locked_key
from pinguard.scan.paths import scan_paths
from pinguard.write.edits import apply, pin_edit
from testing.lockdata import lock_for, locked_test_digest
from tests.helm.chartfiles import BLOCK, write_chart

CHARTS = Path(__file__).parent.parent / "testdata" / "charts"
NGINX = locked_test_digest("docker.io/library/nginx", "1.25")


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _locked(*paths: str) -> None:
    lockfile.write(Path("pinguard.lock"), lock_for(scan_paths(list(paths)).found))


def _placed(path: str) -> str:
    """The values file with each reference's locked digest where the reading puts it: what `pin` writes in values of
    no chart, and what `check` reads as pinned in a chart's."""
    lock = lockfile.read(Path("pinguard.lock"))
    (scanned,) = scan_paths([path]).files
    edits = [pin_edit(found, entry.digest) for found in scanned.found if found.reference is not None
             and (key := locked_key(found.reference)) is not None and (entry := lock.get(*key)) is not None]
    return apply(scanned.file.text, edits)


def _refused(path: str) -> None:
    """`pin` without Helm refuses to write into the chart's values: exit 2, saying so, no byte changed."""
    before = Path(path).read_bytes()
    status, _, err = _run("pin", path)
    assert (status, err.splitlines()[-1]) == (2, f"pinguard: nothing written: {NEEDS_HELM}")
    assert Path(path).read_bytes() == before


@pytest.mark.parametrize("chart", ["reads-digest", "ignores-digest"])
def test_a_chart_at_hand_decides_where_the_digest_goes(chart: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / chart
    shutil.copytree(CHARTS / chart, work, ignore=shutil.ignore_patterns("*.golden.*", "*.scan"))
    monkeypatch.chdir(work)
    _locked("values.yaml")
    assert _run("scan", "values.yaml")[1] == (CHARTS / chart / "values.yaml.scan").read_text()
    golden = (CHARTS / chart / "values.golden.yaml").read_text()
    assert _placed("values.yaml") == golden
    _refused("values.yaml")
    Path("values.yaml").write_text(golden)
    assert _run("pin", "--dry-run", "values.yaml")[:2] == (0, "")  # read back pinned: nothing left to write


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
    assert f"values.yaml:2:15: error: `ghcr.io/acme/api` is not pinned to its locked digest, and {NEEDS_HELM}" in out
    Path("values.yaml").write_text(_placed("values.yaml"))
    status, out, _ = _run("check", "values.yaml")
    assert "[unpinned]" not in out
    assert "pinned in its tag: remove this field" in out  # still misleading; pin changes no byte but the tag


def test_a_values_file_below_the_chart_belongs_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(CHARTS / "ignores-digest", tmp_path / "api")
    monkeypatch.chdir(tmp_path / "api")
    (found,) = scan_paths(["ci/smoke-values.yaml"]).found
    assert found.digest_field is not None and found.digest_field.prefix == "@"  # the tag form


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
    write_chart(tmp_path, template, SHA_BLOCK)
    monkeypatch.chdir(tmp_path)
    _locked("values.yaml")
    assert _placed("values.yaml") == SHA_BLOCK.replace('sha: ""', f'sha: "{written}"')
    Path("values.yaml").write_text(_placed("values.yaml"))
    (found,) = scan_paths(["values.yaml"]).found
    assert found.reference is not None and found.reference.digest == RBAC_PROXY  # reads back, pinned


def test_a_block_naming_its_image_with_image_is_one_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ingress-nginx: `{registry, image, tag, digest}`, the digest read through a helper
    values = ("controller:\n  image:\n    registry: registry.k8s.io\n    image: ingress-nginx/controller\n"
              '    tag: "v1.7.0"\n    digest: ""\n')
    write_chart(tmp_path,
                '{{- define "imageDigest" -}}{{- if .digest }}{{ printf "@%s" .digest }}{{- end }}{{- end }}\n'
                "{{- with .Values.controller.image }}\n"
                'image: "{{ .registry }}/{{ .image }}:{{ .tag }}{{ include "imageDigest" . }}"\n{{- end }}', values)
    monkeypatch.chdir(tmp_path)
    scanned = _run("scan", "values.yaml")[1]
    assert scanned == "values.yaml:4:12: registry.k8s.io/ingress-nginx/controller:v1.7.0 (helm)\n"
    _locked("values.yaml")
    _refused("values.yaml")
    digest = locked_test_digest("registry.k8s.io/ingress-nginx/controller", "v1.7.0")
    assert _placed("values.yaml") == values.replace('digest: ""', f'digest: "{digest}"')
