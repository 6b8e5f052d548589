"""The helm binary: the one named or on PATH, Helm 3 or 4, run with its time and output bounded."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.helm import binary
from pinguard.helm.binary import Helm, RenderFailed, locate


def _script(folder: Path, body: str, name: str = "helm") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _env(*folders: Path) -> dict[str, str]:
    return {"PATH": os.pathsep.join([*map(str, folders), os.environ["PATH"]])}


def test_the_helm_on_path_is_found_and_its_version_kept(tmp_path: Path) -> None:
    _script(tmp_path / "bin", 'echo "v3.14.4+g81c902a"\n')
    found = locate(None, _env(tmp_path / "bin"))
    assert found == Helm(str(tmp_path / "bin" / "helm"), "v3.14.4")


def test_no_helm_on_path_is_none_but_one_named_must_run(tmp_path: Path) -> None:
    assert locate(None, {"PATH": str(tmp_path)}) is None
    with pytest.raises(PinguardError, match=r"^helm: 'tools/helm' is not an executable file$"):
        locate("tools/helm", {"PATH": str(tmp_path)})
    with pytest.raises(PinguardError, match=r"^helm: 'hlem' is not an executable file$"):
        locate("hlem", {"PATH": str(tmp_path)})  # a typo must not read charts another way


@pytest.mark.parametrize(("answer", "problem"), [
    ('echo "v2.17.0+ga690bad"', "reports version 'v2.17.0+ga690bad'; pinguard works with Helm 3 and 4"),
    ('echo "Error: unknown command" >&2; exit 1', "does not answer `helm version`: Error: unknown command"),
])
def test_a_helm_named_that_is_not_helm_3_or_4_is_an_error(answer: str, problem: str, tmp_path: Path) -> None:
    named = _script(tmp_path, answer + "\n")
    with pytest.raises(PinguardError, match=r"^helm: ") as raised:
        locate(str(named), {"PATH": str(tmp_path)})
    assert str(raised.value) == f"helm: {named} {problem}"


def test_a_render_refused_says_helms_error_line(tmp_path: Path) -> None:
    helm = Helm(str(_script(tmp_path, 'echo "walk.go:75: found symbolic link" >&2\n'
                                      'echo "Error: template: app/templates/pod.yaml:3: bad" >&2\n'
                                      'echo "Use --debug for more" >&2\nexit 1\n')), "v3.14.4")
    with pytest.raises(RenderFailed, match=r"^Error: template: app/templates/pod\.yaml:3: bad$"):
        helm.template(tmp_path, [])


def test_values_and_settings_are_handed_to_helm_template_in_order(tmp_path: Path) -> None:
    echoing = 'echo "$@"\nwhile [ $# -gt 0 ]; do [ "$1" = --values ] && cat "$2"; shift; done\n'
    helm = Helm(str(_script(tmp_path, echoing)), "v4.1.0")
    rendered = helm.template(tmp_path / "app", ["a: 1\n", "a: 2\n"], [("image.tag", "1.2")]).splitlines()
    arguments = rendered[0].split()
    assert arguments[:3] == ["template", binary.RELEASE, str(tmp_path / "app")]
    assert arguments[3::2] == ["--values", "--values", "--set"] and arguments[-1] == "image.tag=1.2"
    assert rendered[1:] == ["a: 1", "a: 2"]


def test_a_render_is_bounded_in_size_and_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binary, "_OUTPUT_LIMIT", 1 << 20)
    endless = Helm(str(_script(tmp_path, "exec yes\n", "endless")), "v3.14.4")
    with pytest.raises(RenderFailed, match=r"^rendered more than 1 MiB$"):
        endless.template(tmp_path, [])
    monkeypatch.setattr(binary, "_TIMEOUT", 0.5)
    stuck = Helm(str(_script(tmp_path, "exec sleep 30\n", "stuck")), "v3.14.4")
    with pytest.raises(RenderFailed, match=r"^no answer within 0 seconds$"):
        stuck.template(tmp_path, [])


def test_the_real_helm_renders_a_chart(helm: str, tmp_path: Path) -> None:
    found = locate(helm, {})
    assert found is not None and found.version.startswith(("v3.", "v4."))
    (tmp_path / "app" / "templates").mkdir(parents=True)
    (tmp_path / "app" / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\n")
    (tmp_path / "app" / "templates" / "pod.yaml").write_text("kind: Pod\nimage: {{ .Values.image }}\n")
    assert "image: nginx:1.25\n" in found.template(tmp_path / "app", ["image: nginx:1.24\n", "image: nginx:1.25\n"])
