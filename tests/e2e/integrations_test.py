"""The integrations, checked with the real tools: the pre-commit hooks, the GitHub Action, the workflows.

The pre-commit tests install the hooks the way a user's `.pre-commit-config.yaml` does: pre-commit clones
a git repository holding this working tree (tracked and untracked files, ignored ones left out, so the
result does not depend on what is committed yet) and pip-installs it into a virtual environment of its
own, once for the module, in a pre-commit home under the test's temporary folder. That install needs
PyPI for pinguard's dependencies; the hooks themselves run offline.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from pinguard.sources import kinds
from testing.lockdata import lock_for

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the virtual environment the tests run in: .venv/bin
HOOK_IDS = ("pinguard-check", "pinguard-pin")


def _missing(name: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must install {name} (the dev extra does: scripts/setup.sh)")
    pytest.skip(f"needs {name} in {BIN.parent}: run scripts/setup.sh")


def _require(tool: Path) -> Path:
    if not tool.exists():
        _missing(tool.name)
    return tool


def _require_pre_commit() -> None:
    if importlib.util.find_spec("pre_commit") is None:
        _missing("pre-commit")


def _load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as stream:
        return yaml.safe_load(stream)


# --- .pre-commit-hooks.yaml ---------------------------------------------------------------------------------


def _hooks() -> dict[str, dict[str, Any]]:
    return {hook["id"]: hook for hook in _load_yaml(ROOT / ".pre-commit-hooks.yaml")}


def test_hook_manifest_declares_check_and_pin() -> None:
    hooks = _hooks()
    assert tuple(hooks) == HOOK_IDS
    for hook_id, command in (("pinguard-check", "check"), ("pinguard-pin", "pin")):
        hook = hooks[hook_id]
        assert hook["entry"] == f"pinguard {command}"
        assert hook["language"] == "python"
        assert hook["name"] and hook["description"] and hook["minimum_pre_commit_version"]
    assert hooks["pinguard-pin"]["require_serial"] is True  # one all-or-nothing pin against one lockfile
    assert "require_serial" not in hooks["pinguard-check"]


def test_hook_manifest_is_valid_for_pre_commit() -> None:
    _require_pre_commit()
    result = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", ".pre-commit-hooks.yaml"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


NAMES = [
    "pod.yaml", "deploy/job.yml", "k8s/list.json", "chart/values.yaml.tmpl", "ray/runtime_env.yaml-template",
    "CONFIG.YAML", "Dockerfile", "docker/Dockerfile.gpu", "train.Dockerfile", "Dockerfile-dev", "build/Containerfile",
    "docker-compose.yml", "README.md", "pinguard.lock", ".pinguard.lock.lck", "setup.py", "Makefile",
    "dockerfiles/README", "notdockerfile", "yaml/notes.txt", "scripts/setup.sh", "docs/Dockerfile.md",
    "chart/templates/_helpers.tpl", "deploy/a.yaml.gotmpl", "ansible/playbook.yml.j2", "k8s/job.yaml.template",
]


@pytest.mark.parametrize("hook_id", HOOK_IDS)
def test_hook_files_are_the_names_pinguard_reads(hook_id: str) -> None:
    pattern = re.compile(_hooks()[hook_id]["files"])  # pre-commit searches the path from the repository root
    assert {name: bool(pattern.search(name)) for name in NAMES} == {
        name: kinds.may_hold_images(PurePosixPath(name).name) for name in NAMES
    }


# --- the hooks, run by pre-commit ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PreCommit:
    config: Path
    env: dict[str, str]

    def git(self, *args: str, cwd: Path) -> str:
        return subprocess.run(["git", *args], cwd=cwd, env=self.env, check=True, capture_output=True, text=True,
                              timeout=60).stdout

    def run(self, hook_id: str, cwd: Path) -> tuple[int, str]:
        """`pre-commit run HOOK --all-files` in cwd: its exit status and everything it printed."""
        result = subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--config", str(self.config), "--all-files",
             "--color", "never", hook_id],
            cwd=cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
        )
        return result.returncode, result.stdout


def _clean_env(home: Path) -> dict[str, str]:
    """The environment minus git's and pre-commit's own settings, with a home, git identity and store of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT")) and k != "SKIP"}
    env.update(
        HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PRE_COMMIT_HOME=str(home / "pre-commit"),
        GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="pinguard tests", GIT_AUTHOR_EMAIL="tests@pinguard.invalid",
        GIT_COMMITTER_NAME="pinguard tests", GIT_COMMITTER_EMAIL="tests@pinguard.invalid",
    )
    return env


def _copy_working_tree(into: Path, env: dict[str, str]) -> None:
    """What `git ls-files` shows of ROOT, committed or not: the repository as pre-commit would clone it."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            env=env, check=True, capture_output=True, timeout=60).stdout
    for name in sorted(set(listed.decode().split("\0")) - {""}):
        source, target = ROOT / name, into / name
        if source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(os.readlink(source))
        elif source.is_file():  # skips files deleted but not yet staged, and nested repositories
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


@pytest.fixture(scope="module")
def pre_commit(tmp_path_factory: pytest.TempPathFactory) -> PreCommit:
    _require_pre_commit()
    base = tmp_path_factory.mktemp("pre-commit")
    env = _clean_env(base / "home")
    hooks_repo = base / "pinguard"
    hooks_repo.mkdir()
    _copy_working_tree(hooks_repo, env)
    tool = PreCommit(base / "pre-commit-config.yaml", env)
    tool.git("init", "-q", cwd=hooks_repo)
    tool.git("add", "-A", cwd=hooks_repo)
    tool.git("commit", "-q", "--no-verify", "-m", "pinguard as published", cwd=hooks_repo)
    rev = tool.git("rev-parse", "HEAD", cwd=hooks_repo).strip()
    tool.config.write_text(yaml.safe_dump({"repos": [
        {"repo": str(hooks_repo), "rev": rev, "hooks": [{"id": hook_id} for hook_id in HOOK_IDS]},
    ]}))
    return tool


JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime  # the trainer
        command: [torchrun, train.py]
"""
DOCKERFILE = "FROM python:3.11-slim\nRUN pip install --no-cache-dir ray\n"
README = "Run `docker run python:3.11-slim` to try it.\n"  # not a file pinguard reads: never rewritten


def _pinned(text: str, reference: str, name: str, lock_path: Path) -> str:
    """text with reference pinned to the digest that the lock holds for name and reference's tag."""
    entry = lockfile.read(lock_path).get(name, reference.rpartition(":")[2])
    assert entry is not None
    return text.replace(reference, f"{reference}@{entry.digest}")


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pre_commit: PreCommit) -> Path:
    """A git repository with an unpinned Job and Dockerfile, and a pinguard.lock that locks their images."""
    work = tmp_path / "work"
    (work / "k8s").mkdir(parents=True)
    (work / "k8s" / "train.yaml").write_text(JOB)
    (work / "Dockerfile").write_text(DOCKERFILE)
    (work / "README.md").write_text(README)
    monkeypatch.chdir(work)
    lockfile.write(Path("pinguard.lock"), lock_for(scan_paths(["k8s/train.yaml", "Dockerfile"]).found))
    pre_commit.git("init", "-q", cwd=work)
    pre_commit.git("add", "-A", cwd=work)
    return work


def test_pin_hook_pins_what_check_hook_reports(pre_commit: PreCommit, work: Path) -> None:
    status, out = pre_commit.run("pinguard-check", work)
    assert status == 1, out
    assert re.search(r"^pinguard check\.+Failed$", out, re.MULTILINE), out
    assert "k8s/train.yaml:11:16: error:" in out and "[unpinned]" in out, out
    assert "Dockerfile:1:6: error:" in out, out

    status, out = pre_commit.run("pinguard-pin", work)
    assert status == 1, out  # pre-commit fails a hook that changed files, so that the change is looked at
    assert re.search(r"^pinguard pin\.+Failed$", out, re.MULTILINE), out
    assert "files were modified by this hook" in out, out
    lock = work / "pinguard.lock"
    assert (work / "k8s" / "train.yaml").read_text() == _pinned(
        JOB, "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime", "docker.io/pytorch/pytorch", lock)
    assert (work / "Dockerfile").read_text() == _pinned(
        DOCKERFILE, "python:3.11-slim", "docker.io/library/python", lock)
    assert (work / "README.md").read_text() == README

    status, out = pre_commit.run("pinguard-check", work)
    assert status == 0, out
    assert re.search(r"^pinguard check\.+Passed$", out, re.MULTILINE), out

    status, out = pre_commit.run("pinguard-pin", work)  # pinned already: nothing left to do
    assert status == 0, out
    assert re.search(r"^pinguard pin\.+Passed$", out, re.MULTILINE), out


def test_pin_hook_fails_on_a_reference_missing_from_the_lock(pre_commit: PreCommit, work: Path) -> None:
    (work / "k8s" / "eval.yaml").write_text(JOB.replace("pytorch/pytorch:2.4.0", "pytorch/pytorch:2.5.0"))
    pre_commit.git("add", "-A", cwd=work)

    status, out = pre_commit.run("pinguard-pin", work)
    assert status == 1, out
    assert "- exit code: 1" in out, out  # pinguard's own failure, not only the files it changed
    missing = r"k8s/eval\.yaml:11:16: \S*pytorch/pytorch:2\.5\.0-cuda12\.1-cudnn9-runtime is not in pinguard\.lock"
    assert re.search(missing, out), out
    assert (work / "k8s" / "eval.yaml").read_text() == JOB.replace("pytorch/pytorch:2.4.0", "pytorch/pytorch:2.5.0")
    assert "@sha256:" in (work / "k8s" / "train.yaml").read_text()  # what the lock holds is pinned all the same


# --- action.yml ---------------------------------------------------------------------------------------------


def _action() -> dict[str, Any]:
    action = _load_yaml(ROOT / "action.yml")
    assert isinstance(action, dict)
    return action


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_action_metadata_is_a_composite_action() -> None:
    action = _action()
    assert action["name"] and action["description"]
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert {"paths", "policy", "format", "upload-sarif", "annotations"} <= set(inputs)
    assert (inputs["paths"]["default"], inputs["format"]["default"], inputs["upload-sarif"]["default"]) == (
        ".", "sarif", "true")
    for name, spec in inputs.items():
        assert spec.get("description"), f"input {name} has no description"
    for step in action["runs"]["steps"]:
        assert ("uses" in step) != ("run" in step), step
        if "run" in step:
            assert step.get("shell"), f"step {step.get('name')}: a composite action's run step needs a shell"
            # Inputs reach scripts through env, never by ${{ }} inside the script (injection).
            assert "${{" not in step["run"], f"step {step.get('name')} interpolates an expression into its script"


def test_action_references_only_declared_inputs_and_steps() -> None:
    action = _action()
    text = "\n".join(_strings([action["runs"], action.get("outputs", {})]))
    used_inputs = set(re.findall(r"\binputs\.([A-Za-z_][\w-]*)", text))
    assert used_inputs, "the action uses no inputs?"
    assert used_inputs <= set(action["inputs"]), used_inputs - set(action["inputs"])
    assert set(action["inputs"]) <= used_inputs, f"declared but unused: {set(action['inputs']) - used_inputs}"
    step_ids = {step["id"] for step in action["runs"]["steps"] if "id" in step}
    used_steps = set(re.findall(r"\bsteps\.([A-Za-z_][\w-]*)", text))
    assert used_steps <= step_ids, used_steps - step_ids


def _script(step_name: str) -> str:
    [step] = [s for s in _action()["runs"]["steps"] if s.get("name") == step_name]
    return str(step["run"])


def test_action_scripts_pass_shellcheck() -> None:
    shellcheck = _require(BIN / "shellcheck")
    for step in _action()["runs"]["steps"]:
        if "run" in step:
            result = subprocess.run([str(shellcheck), "--shell=bash", "-"], input=step["run"], capture_output=True,
                                    text=True, timeout=60)
            assert result.returncode == 0, f"step {step.get('name')}:\n{result.stdout}"


def test_action_check_step_reports_and_keeps_the_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check step's script as the runner would run it: the findings' exit status is kept, not raised."""
    pinguard = _require(BIN / "pinguard")
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "train.yaml").write_text(JOB)
    monkeypatch.chdir(tmp_path)
    lockfile.write(Path("pinguard.lock"), lock_for(scan_paths(["k8s"]).found))
    github_output = tmp_path / "github-output"
    github_output.touch()
    env = {**os.environ, "GITHUB_OUTPUT": str(github_output), "PINGUARD": str(pinguard),
           "INPUT_PATHS": "k8s\n", "INPUT_POLICY": "", "INPUT_LOCKFILE": "pinguard.lock",
           "INPUT_FORMAT": "sarif", "INPUT_OUTPUT": "pinguard.sarif", "INPUT_ANNOTATIONS": "true"}
    result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _script("pinguard check")],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr  # the step itself passes; the last step fails the job
    assert github_output.read_text().splitlines() == ["exit-code=1", "written=true"]
    sarif = json.loads((tmp_path / "pinguard.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert [r["ruleId"] for run in sarif["runs"] for r in run["results"]] == ["unpinned"]
    assert result.stdout.startswith("::error file=k8s/train.yaml,line=11,col=16,"), result.stdout

    failed = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _script("Fail on findings")],
                            env={**os.environ, "STATUS": "1"}, capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1
    assert failed.stdout.startswith("::error title=pinguard check::")


# --- workflows ----------------------------------------------------------------------------------------------


def test_workflows_pass_actionlint() -> None:
    actionlint = _require(BIN / "actionlint")
    shellcheck = _require(BIN / "shellcheck")
    workflows = sorted(ROOT.glob(".github/workflows/*.yml")) + sorted(ROOT.glob("examples/workflows/*.yml"))
    assert len(workflows) >= 2
    # From the root, so that `uses: ./` in the example is checked against action.yml's inputs.
    result = subprocess.run(
        [str(actionlint), "-shellcheck", str(shellcheck), *(str(p.relative_to(ROOT)) for p in workflows)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
