"""What a scan asks of Helm, without a helm to render: each file placed among the charts, values read as text."""
from __future__ import annotations

from pathlib import Path

from pinguard.helm.reader import HelmReader
from pinguard.helm.settings import Deployment, HelmSettings
from pinguard.sources import kinds
from pinguard.sources.base import SourceSettings
from tests.helm.chartfiles import BLOCK, write_chart

TEMPLATE = "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n"


def test_without_helm_a_charts_values_are_read_as_text_and_never_pinned(tmp_path: Path) -> None:
    chart, pod = tmp_path / "app", tmp_path / "pod.yaml"
    write_chart(chart, TEMPLATE, BLOCK)
    pod.write_text("kind: Pod\nspec:\n  containers:\n  - image: nginx:1.25\n")
    helm = HelmReader.for_scan(HelmSettings(), {}, [chart / "values.yaml", pod])  # no PATH: no helm
    values = helm.in_chart(chart / "values.yaml")
    assert (values.root, values.folder, values.named, values.chart) == (chart, chart.as_posix(), False, None)
    assert values.rendered() is None  # read as text
    (found,) = values.beside(helm.values(chart / "values.yaml", BLOCK, SourceSettings()).found, kinds.HELM)
    assert str(found.reference) == "docker.io/library/nginx:1.25" and found.pin_needs_helm
    outside = helm.in_chart(pod)
    assert (outside.root, outside.named, outside.chart) == (None, False, None)
    (manifest,) = kinds.find(pod.as_posix(), pod.read_text(), kinds.KUBERNETES).found
    assert outside.beside([manifest], kinds.KUBERNETES) == [manifest]  # no chart's: as its source found it


def test_a_values_file_the_policy_deploys_belongs_to_its_chart_wherever_it_lies(tmp_path: Path) -> None:
    chart, prod = tmp_path / "app", tmp_path / "deploy" / "prod.yaml"
    write_chart(chart, TEMPLATE, BLOCK)
    prod.parent.mkdir()
    prod.write_text(BLOCK)
    settings = HelmSettings(deployments=(Deployment(chart, (chart / "values.yaml", prod)),))
    placed = HelmReader.for_scan(settings, {}, [prod]).in_chart(prod)
    assert (placed.root, placed.named) == (chart, True)
    assert kinds.detect(prod.as_posix(), BLOCK, chart=placed.folder, named_values=placed.named) == kinds.HELM


def test_a_values_file_the_policy_says_is_read_for_digest_gets_its_digest_beside_the_tag(tmp_path: Path) -> None:
    """`helm.digest-read`: the chart is not at hand, and the policy says it reads `digest:`."""
    values = tmp_path / "deploy" / "values.yaml"
    values.parent.mkdir()
    values.write_text(BLOCK)
    for globs, prefix in (((), "@"), ((f"{tmp_path.as_posix()}/deploy/*.yaml",), "  digest: ")):
        helm = HelmReader.for_scan(HelmSettings(digest_read=globs), {}, [values])
        (found,) = helm.values(values, BLOCK, SourceSettings()).found
        assert found.digest_field is not None and found.digest_field.prefix == prefix
