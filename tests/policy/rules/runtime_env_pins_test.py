"""runtime-env-pins as a truth table: manifest in, findings (line, column, message part) out."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.policy.rules import runtime_env_pins
from tests.conftest import CORPUS
from tests.policy.helpers import assert_found, check_rule, files_flagged

HASH = "0" * 64
COMMIT = "a" * 40


def ray_job(runtime_env: str) -> str:
    """A RayJob whose runtimeEnvYAML block starts on line 6, indented by 4."""
    body = "".join(f"    {line}\n" for line in runtime_env.splitlines())
    return f"apiVersion: ray.io/v1\nkind: RayJob\nspec:\n  entrypoint: python train.py\n  runtimeEnvYAML: |\n{body}"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        # pinned: ==, ===, extras, markers, spaces, a hashed URL, a VCS URL at a commit
        (ray_job("pip:\n  - torch==2.4.1\n  - ray[train,tune]==2.40.0\n  - numpy == 1.26.4\n  - x===1.0"), []),
        (ray_job('pip: ["tomli==2.0.1; python_version < \'3.11\'", "a>=1,==1.2"]'), []),
        (ray_job(f"pip:\n  - pkg @ https://example.com/pkg-1.0-py3-none-any.whl#sha256={HASH}"), []),
        (ray_job(f"pip:\n  - git+https://github.com/org/repo@{COMMIT}#egg=repo"), []),
        (ray_job("pip:\n  - torch==2.4.1 --hash=sha256:" + HASH), []),
        # comments, blank entries and options name no package
        (ray_job("pip:\n  - '# the training stack'\n  - --index-url https://pypi.example.com/simple\n"
                 "  - -f https://storage.googleapis.com/jax-releases/libtpu_releases.html\n  - ''"), []),
        # not pinned: a bare name, a range, a wildcard, a URL without hash, a branch
        (ray_job("pip:\n  - torch\n  - datasets==3.0.1\n  - transformers>=4.45"),
         [(7, 9, "`torch` is not pinned: write `torch==VERSION`; runtime_env packages are installed when the job "
                 "starts, outside the image lock"),
          (9, 9, "`transformers>=4.45` is not pinned to one version: write `transformers==VERSION`")]),
        (ray_job("pip:\n  - ray[train]~=2.40\n  - numpy==1.*  # any 1.x"),
         [(7, 9, "write `ray[train]==VERSION`"), (8, 9, "`numpy==1.*` is not pinned to one version")]),
        (ray_job("pip:\n  - torch; sys_platform == 'linux'"), [(7, 9, "write `torch==VERSION`")]),
        (ray_job("pip:\n  - pkg @ https://example.com/pkg.whl\n  - git+https://github.com/org/repo@main"),
         [(7, 9, "`pkg @ https://example.com/pkg.whl` is not pinned: write `name==VERSION`, or a URL ending in "
                 "`#sha256=DIGEST`"),
          (8, 9, "`git+https://github.com/org/repo@main` is not pinned")]),
        # requirements files and editable installs cannot be checked
        (ray_job("pip:\n  - -r requirements.txt\n  - -e ./my_pkg"),
         [(7, 9, "`-r requirements.txt` names a requirements file, which cannot be checked here"),
          (8, 9, "`-e ./my_pkg` is an editable install")]),
        (ray_job("pip: requirements.txt"), [(6, 10, "pip installs the requirements file `requirements.txt`")]),
        # pip and uv, as a list or as {packages: ...}; quoted entries point inside the quotes
        (ray_job('pip: {packages: ["torch", "numpy==1.26.4"], pip_check: false}'), [(6, 23, "`torch`")]),
        (ray_job("uv:\n  packages: ['torch']\n  uv_check: false"), [(7, 19, "`torch`")]),
        (ray_job("uv: [emoji]\nconda: {dependencies: [numpy]}"), [(6, 10, "`emoji`")]),
        # a one-line runtimeEnvYAML maps by offset; a folded one is reported at its start
        ("kind: RayJob\nspec:\n  runtimeEnvYAML: '{\"pip\": [\"torch\"]}'\n", [(3, 30, "`torch`")]),
        ("kind: RayJob\nspec:\n  runtimeEnvYAML: >\n    pip: [torch]\n", [(3, 19, "`torch`")]),
        # a RayCronJob's RayJob, a RayService's serveConfigV2, and runtime_env written as YAML
        ("kind: RayCronJob\nspec:\n  jobTemplate:\n    runtimeEnvYAML: |\n      pip: [torch]\n",
         [(5, 13, "`torch`")]),
        ("kind: RayService\nspec:\n  serveConfigV2: |\n    applications:\n      - name: app\n"
         "        runtime_env: {pip: [diffusers==0.32.2, transformers]}\n        deployments:\n"
         "          - name: d\n            ray_actor_options: {runtime_env: {pip: [accelerate]}}\n",
         [(6, 48, "`transformers`"), (9, 53, "`accelerate`")]),
        ("applications:\n  - name: app\n    runtime_env:\n      pip:\n        - torch\n", [(5, 11, "`torch`")]),
        # not a runtime_env, or not YAML inside
        ("kind: RayJob\nspec:\n  entrypoint: pip install torch\n", []),
        ("kind: RayJob\nspec:\n  runtimeEnvYAML: |\n    pip: [torch\n", []),
    ],
)
def test_runtime_env_pins(folder: Path, manifest: str, expected: list[tuple[int, int, str]]) -> None:
    found = check_rule(folder, "runtime-env-pins", {"job.yaml": manifest})
    assert_found(found, expected, "runtime-env-pins")


def test_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)
    flagged = files_flagged(runtime_env_pins, Path("."))
    assert "kuberay/ray-job.sample.yaml" not in flagged  # requests==2.26.0, pendulum==2.1.2
    assert "kuberay/ray-job.tpu-jax.yaml" not in flagged  # jax[tpu]==0.6.1 and a `-f` option
    assert "kuberay/ray-job.pytorch-mnist.yaml" in flagged  # torch, torchvision


def test_a_runtime_env_file_is_itself_checked(folder: Path) -> None:
    files = {"runtime_env.yaml": "image_uri: ray:2.40.0\npip:\n  - torch==2.6.0\n  - numpy\n"}
    assert_found(check_rule(folder, "runtime-env-pins", files), [(4, 5, "`numpy` is not pinned")], "runtime-env-pins")
