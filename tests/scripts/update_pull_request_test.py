"""scripts/update-pull-request.sh end to end: the real `pinguard update` against a real registry, real git
pushing to a bare repository standing for `origin`, and the GitHub CLI replaced by a recorded fake
(`testing/fake_gh.py`).

Every run is made in a fresh clone of the base branch, as a scheduled job checks the repository out.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pinguard.lock import lockfile
from testing.images import image
from testing.seed import repush_moving, seed_dlc
from tests.conftest import UNPACED, SeededRegistry

pytestmark = pytest.mark.registry

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "update-pull-request.sh"
PINGUARD = Path(sys.executable).parent / "pinguard"
BRANCH, BASE = "pinguard/update", "main"
MOVING = "train-ml-cuda-v1.1"
TOKEN = "ghs_token-that-must-never-be-printed"
BOT = "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"
BODY_LIMIT = 65536


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *args], cwd=cwd,
                          check=True, capture_output=True, text=True, timeout=60).stdout


def _short(digest: str) -> str:
    """How the markdown's table shows a digest."""
    return digest[:len("sha256:") + 12]


class Repository:
    """A bare `origin` whose base branch holds a lock and a manifest pinned against a repository of the test's own,
    and the script run in fresh clones of it, with the fake gh recording what it was asked."""

    def __init__(self, registry: SeededRegistry, tmp_path: Path, repository: str, manifest: str) -> None:
        self.registry, self.tmp, self.repository = registry, tmp_path, repository
        self.image = f"public.ecr.aws/{repository}"
        self.origin = tmp_path / "origin.git"
        self.gh_log, self.gh_state = tmp_path / "gh-calls.jsonl", tmp_path / "gh-state.json"
        self.runs = 0
        self.gh = tmp_path / "bin" / "gh"
        self.gh.parent.mkdir()
        self.gh.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "testing" / "fake_gh.py"}" "$@"\n')
        self.gh.chmod(0o755)
        _git(tmp_path, "init", "--quiet", "--bare", f"--initial-branch={BASE}", str(self.origin))
        work = tmp_path / "seed"
        _git(tmp_path, "init", "--quiet", f"--initial-branch={BASE}", str(work))
        (work / "rayjob.yaml").write_text(manifest.format(image=self.image))
        pinned = subprocess.run([str(PINGUARD), "pin", "--resolve", *self.registry_flags()], cwd=work,
                                env=self.env(), capture_output=True, text=True, timeout=300)
        assert pinned.returncode == 0, pinned.stderr
        _git(work, "add", "rayjob.yaml", "pinguard.lock")
        _git(work, "commit", "--quiet", "-m", "locked and pinned")
        _git(work, "remote", "add", "origin", str(self.origin))
        _git(work, "push", "--quiet", "origin", BASE)
        self.base_commit = self.remote_commit(BASE)

    def registry_flags(self) -> list[str]:
        running = self.registry.registry
        return ["--mirror", f"public.ecr.aws={running.url}", "--ca-file", str(running.ca_file), *UNPACED]

    def env(self, **extra: str) -> dict[str, str]:
        # PYTHONPATH: the pinguard the script runs is the tree's under test, as the tests' own imports are.
        return {"PATH": os.environ["PATH"], "HOME": str(self.tmp / "home"), "LANG": "C.UTF-8", "PYTHONPATH": str(ROOT),
                "PINGUARD_CACHE_DIR": str(self.tmp / "cache"), "PINGUARD": str(PINGUARD), "GH": str(self.gh),
                "GH_TOKEN": TOKEN, "FAKE_GH_LOG": str(self.gh_log), "FAKE_GH_STATE": str(self.gh_state), **extra}

    def run(self, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
        """The script in a fresh clone of the base branch; pinguard update gets `flags` (default: the registry's)."""
        self.runs += 1
        clone = self.tmp / f"clone-{self.runs}"
        _git(self.tmp, "clone", "--quiet", "--branch", BASE, str(self.origin), str(clone))
        result = subprocess.run(["bash", str(SCRIPT), *(flags or self.registry_flags())], cwd=clone,
                                env=self.env(**env), capture_output=True, text=True, timeout=300)
        assert TOKEN not in result.stdout + result.stderr
        return result

    def remote_commit(self, branch: str) -> str | None:
        listed = _git(self.tmp, "ls-remote", str(self.origin), f"refs/heads/{branch}").split()
        return listed[0] if listed else None

    def remote_file(self, branch: str, path: str) -> str:
        return _git(self.origin, "show", f"{branch}:{path}")

    def gh_calls(self) -> list[dict[str, Any]]:
        if not self.gh_log.exists():
            return []
        return [json.loads(line) for line in self.gh_log.read_text().splitlines()]

    def open_pull_request(self, number: int) -> None:
        self.gh_state.write_text(json.dumps({"open": [{"number": number, "head": BRANCH}]}))

    def locked_digest(self, branch: str, tag: str) -> str:
        (self.tmp / "lock-at").write_text(self.remote_file(branch, "pinguard.lock"))
        entry = lockfile.read(self.tmp / "lock-at").get(self.image, tag)
        assert entry is not None
        return entry.digest


RAYJOB = f"""\
apiVersion: ray.io/v1
kind: RayJob
metadata: {{{{name: fsdp}}}}
spec:
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
          - {{{{name: head, image: "{{image}}:{MOVING}"}}}}
"""


@pytest.fixture
def repo(token_registry: SeededRegistry, tmp_path: Path, request: pytest.FixtureRequest) -> Repository:
    repository = f"deep-learning-containers/pr-{request.node.name.removeprefix('test_').replace('_', '-')[:40]}"
    seed_dlc(token_registry.registry.pusher(), repository)
    return Repository(token_registry, tmp_path, repository, RAYJOB)


def _assert_one_commit_on_the_base(repo: Repository, *, changed: list[str]) -> None:
    assert _git(repo.origin, "rev-list", f"{BASE}..{BRANCH}").split() == [repo.remote_commit(BRANCH)]
    assert _git(repo.origin, "rev-parse", f"{BRANCH}^").strip() == repo.base_commit
    assert _git(repo.origin, "diff", "--name-only", BASE, BRANCH).split() == changed
    assert _git(repo.origin, "log", "-1", "--format=%an <%ae>", BRANCH).strip() == BOT


def test_a_moved_tag_opens_a_pull_request_then_updates_the_open_one(repo: Repository) -> None:
    old_digest = repo.locked_digest(BASE, MOVING)
    new_digest = repush_moving(repo.registry.registry.pusher(), repo.repository).tags[MOVING]

    result = repo.run()
    assert result.returncode == 0, result.stderr
    _assert_one_commit_on_the_base(repo, changed=["pinguard.lock", "rayjob.yaml"])
    assert repo.locked_digest(BRANCH, MOVING) == new_digest
    assert f"{MOVING}@{new_digest}" in repo.remote_file(BRANCH, "rayjob.yaml")
    listed, created = repo.gh_calls()
    assert listed["argv"] == ["pr", "list", "--head", BRANCH, "--state", "open", "--json", "number",
                              "--jq", ".[0].number // empty"]
    argv = created["argv"]
    assert argv[:2] == ["pr", "create"]
    assert dict(zip(argv[2::2], argv[3::2], strict=True)).keys() == {"--head", "--base", "--title", "--body-file"}
    assert (argv[argv.index("--head") + 1], argv[argv.index("--base") + 1]) == (BRANCH, BASE)
    body = created["body"]
    assert body.startswith("## Rebuilt images\n")
    assert f"| `{repo.image}:{MOVING}` | `{_short(old_digest)}` | `{_short(new_digest)}` |" in body
    assert "- label `org.opencontainers.image.version`: `1.1.2` -> `1.1.3`\n" in body
    assert all(call["token"] for call in (listed, created))  # gh is handed the token; nothing prints it
    first_push = repo.remote_commit(BRANCH)

    # A week later the tag moved again, and the pull request is still open: its branch and body follow.
    rebuilt = image(seed="cuda-1.1.4", created="2027-01-01T00:00:00Z", layers=2,
                    labels={"org.opencontainers.image.version": "1.1.4"})
    pusher = repo.registry.registry.pusher()
    newest = pusher.push(repo.repository, rebuilt, "train-ml-cuda-v1.1.4")
    pusher.push(repo.repository, rebuilt, MOVING)
    repo.open_pull_request(7)
    result = repo.run()
    assert result.returncode == 0, result.stderr
    assert repo.remote_commit(BRANCH) != first_push
    _assert_one_commit_on_the_base(repo, changed=["pinguard.lock", "rayjob.yaml"])
    assert repo.locked_digest(BRANCH, MOVING) == newest
    listed, edited = repo.gh_calls()[2:]
    assert listed["argv"][:2] == ["pr", "list"]
    assert edited["argv"][:3] == ["pr", "edit", "7"]
    assert edited["argv"][3:] == ["--title", created["argv"][created["argv"].index("--title") + 1],
                                  "--body-file", edited["argv"][-1]]
    assert f"| `{_short(old_digest)}` | `{_short(newest)}` |" in edited["body"]
    assert "`train-ml-cuda-v1.1.4`" in edited["body"]


def test_nothing_moved_pushes_nothing_and_calls_no_one(repo: Repository) -> None:
    result = repo.run()
    assert (result.returncode, result.stdout) == (0, "update-pull-request: nothing moved; nothing to push\n")
    assert repo.remote_commit(BRANCH) is None
    assert repo.gh_calls() == []


@pytest.mark.parametrize("failure", ["unreachable registry", "broken lockfile"])
def test_a_failing_update_fails_and_pushes_nothing(repo: Repository, failure: str) -> None:
    repush_moving(repo.registry.registry.pusher(), repo.repository)
    flags: list[str] = []
    if failure == "unreachable registry":
        flags = ["--mirror", "public.ecr.aws=https://127.0.0.1:9", "--timeout", "10", *UNPACED]
    else:
        seed = repo.tmp / "seed"
        (seed / "pinguard.lock").write_text("this is [not a lockfile\n")
        _git(seed, "commit", "--quiet", "-am", "a broken lockfile")
        _git(seed, "push", "--quiet", "origin", BASE)
    result = repo.run(*flags)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "pinguard update failed (exit 2); nothing was pushed" in result.stderr
    assert repo.remote_commit(BRANCH) is None
    assert repo.gh_calls() == []


LABELS = 8  # each changed label is a line of the body 10,000 characters long: together over GitHub's limit


def _noted(version: str, fill: str) -> dict[str, str]:
    return {"org.opencontainers.image.version": version,
            **{f"org.example.note-{n}": fill * 5000 for n in range(LABELS)}}


def test_a_body_over_the_limit_is_cut_at_a_line_and_says_so(token_registry: SeededRegistry, tmp_path: Path) -> None:
    pusher = token_registry.registry.pusher()
    repository = "deep-learning-containers/pr-long-body"
    first = image(seed="notes-1.1.0", labels=_noted("1.1.0", "a"))
    for tag in ("train-ml-cuda-v1.1.0", MOVING):
        pusher.push(repository, first, tag)
    repo = Repository(token_registry, tmp_path, repository, RAYJOB)
    rebuilt = image(seed="notes-1.1.1", created="2026-12-01T00:00:00Z", labels=_noted("1.1.1", "b"))
    for tag in ("train-ml-cuda-v1.1.1", MOVING):
        pusher.push(repository, rebuilt, tag)

    result = repo.run()
    assert result.returncode == 0, result.stderr
    _, created = repo.gh_calls()
    body: str = created["body"]
    assert len(body.encode()) <= BODY_LIMIT
    kept, note = body.rstrip("\n").rsplit("\n\n", 1)
    assert note.startswith("*The explanation is cut here: at ") and note.endswith("prints all of it.*")
    assert kept.startswith("## Rebuilt images\n")
    notes = [line for line in kept.splitlines() if line.startswith("- label `org.example.note-")]
    assert 0 < len(notes) < LABELS
    assert all(line.endswith(f"`{'a' * 5000}` -> `{'b' * 5000}`") for line in notes)  # whole lines only
