"""Renders made once a run and kept between runs, under a name that changes with anything they depend on."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pinguard.helm.binary import Helm, RenderFailed
from pinguard.helm.renders import Renderer
from pinguard.helm.settings import Deployment

# A stand-in for `helm template`: it counts its runs and renders the values files it is given, in order.
FAKE_HELM = """\
#!/bin/sh
echo run >> "$(dirname "$0")/runs"
[ -f "$3/fail" ] && { echo "Error: $(cat "$3/fail")" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in --values) cat "$2";; --set) echo "set: $2";; esac
  shift
done
"""


@pytest.fixture
def fake_helm(tmp_path: Path) -> Helm:
    script = tmp_path / "bin" / "helm"
    script.parent.mkdir()
    script.write_text(FAKE_HELM)
    script.chmod(0o755)
    return Helm(str(script), "v3.14.4")


def _runs(helm: Helm) -> int:
    runs = Path(helm.path).parent / "runs"
    return len(runs.read_text().splitlines()) if runs.exists() else 0


@pytest.fixture
def deployment(tmp_path: Path) -> Deployment:
    chart = tmp_path / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    (chart / "values.yaml").write_text("tag: '1.0'\n")
    return Deployment(chart, (chart / "values.yaml",), (("replicas", "2"),))


ENV = {"PATH": os.environ["PATH"]}


def test_a_render_is_made_once_a_run_and_read_back_in_the_next(fake_helm: Helm, deployment: Deployment,
                                                                 tmp_path: Path) -> None:
    first = Renderer(fake_helm, tmp_path / "cache", ENV)
    assert first.render(deployment) == first.render(deployment) == "tag: '1.0'\nset: replicas=2\n"
    assert _runs(fake_helm) == 1
    assert Renderer(fake_helm, tmp_path / "cache", ENV).render(deployment) == "tag: '1.0'\nset: replicas=2\n"
    assert _runs(fake_helm) == 1  # kept between runs
    assert Renderer(fake_helm, None, ENV).render(deployment) and _runs(fake_helm) == 2  # nowhere to keep it


@pytest.mark.parametrize("change", ["template", "version", "set"])
def test_any_change_it_depends_on_is_a_new_render(change: str, fake_helm: Helm, deployment: Deployment,
                                                  tmp_path: Path) -> None:
    Renderer(fake_helm, tmp_path / "cache", ENV).render(deployment)
    if change == "template":
        (deployment.chart / "templates" / "pod.yaml").write_text("kind: Pod\n")
    elif change == "version":
        fake_helm = Helm(fake_helm.path, "v3.15.0")
    else:
        deployment = Deployment(deployment.chart, deployment.values, (("replicas", "3"),))
    Renderer(fake_helm, tmp_path / "cache", ENV).render(deployment)
    assert _runs(fake_helm) == 2


def test_edited_values_are_rendered_in_place_of_the_file(fake_helm: Helm, deployment: Deployment,
                                                         tmp_path: Path) -> None:
    renderer = Renderer(fake_helm, tmp_path / "cache", ENV)
    edited = {(deployment.chart / "values.yaml").resolve(): "tag: '1.0@sha256:d'\n"}
    assert renderer.render(deployment, edited) == "tag: '1.0@sha256:d'\nset: replicas=2\n"
    assert (deployment.chart / "values.yaml").read_text() == "tag: '1.0'\n"  # the file untouched


def test_a_damaged_kept_render_is_made_again(fake_helm: Helm, deployment: Deployment, tmp_path: Path) -> None:
    Renderer(fake_helm, tmp_path / "cache", ENV).render(deployment)
    (kept,) = (tmp_path / "cache" / "helm").iterdir()
    kept.write_text(kept.read_text().replace("1.0", "6.6"))
    assert Renderer(fake_helm, tmp_path / "cache", ENV).render(deployment) == "tag: '1.0'\nset: replicas=2\n"
    assert _runs(fake_helm) == 2


def test_a_refusal_is_an_answer_given_once_a_run_and_never_kept(fake_helm: Helm, deployment: Deployment,
                                                                tmp_path: Path) -> None:
    (deployment.chart / "fail").write_text("template: broken")
    renderer = Renderer(fake_helm, tmp_path / "cache", ENV)
    for _ in range(2):
        with pytest.raises(RenderFailed, match=r"^Error: template: broken$"):
            renderer.render(deployment)
    assert _runs(fake_helm) == 1 and not (tmp_path / "cache" / "helm").exists()
