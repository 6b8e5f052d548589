"""GitHub Actions locked to commits, end to end: `lock`, `pin`, `check`, `verify` and `update` against a real git
server (git-http-backend on loopback, `testing/git_server.py`) holding repositories built in the test."""
from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from testing.git_server import GitRepos, GitServer, serve_git

WORKFLOW = """\
name: ci
on: [push]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v6
      - uses: Acme/Deploy/setup@v1   # deploy it
      - uses: ./.github/actions/local
      - name: quoted
        uses: "acme/deploy/setup@v1"
  reuse:
    uses: acme/deploy/.github/workflows/release.yml@main
"""


class Project:
    """A repository using actions of a git server's repositories, and pinguard run on it."""

    def __init__(self, server: GitServer, repos: GitRepos, work: Path) -> None:
        self.server, self.repos, self.work = server, repos, work
        self.workflow = work / ".github" / "workflows" / "ci.yml"
        self.workflow.parent.mkdir(parents=True)
        self.workflow.write_text(WORKFLOW)

    def run(self, *args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        env = {"HOME": str(self.work.parent / "home"), "PINGUARD_CACHE_DIR": str(self.work.parent / "cache"),
               "GITHUB_SERVER_URL": self.server.url}
        paths = [] if args[0] == "verify" else [str(self.work)]  # verify reads the lock alone
        status = main([*args, "--lockfile", str(self.work / "pinguard.lock"), *paths], env=env, stdout=out, stderr=err)
        return status, out.getvalue(), err.getvalue()

    @property
    def lock(self) -> lockfile.Lock:
        return lockfile.read(self.work / "pinguard.lock")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    repos = GitRepos(tmp_path / "git")
    repos.create("actions/checkout")
    first = repos.commit("actions/checkout", "v6.0.0")
    repos.tag("actions/checkout", "v6.0.0", first)
    second = repos.commit("actions/checkout", "v6.0.1")
    repos.annotated_tag("actions/checkout", "v6.0.1", second)
    repos.tag("actions/checkout", "v6", second)
    repos.create("acme/deploy")
    release = repos.commit("acme/deploy", "v1.2.3")
    repos.annotated_tag("acme/deploy", "v1.2.3", release)
    repos.annotated_tag("acme/deploy", "v1", release)
    repos.commit("acme/deploy", "later work on main")
    work = tmp_path / "work"
    work.mkdir()
    with serve_git(repos.root) as server:
        yield Project(server, repos, work)


def _commit(project: Project, repository: str, ref: str) -> str:
    refs = {entry.key: entry.commit for entry in project.lock.actions.entries.values()}
    return refs[(repository, ref)]


def test_lock_records_each_ref_with_one_listing_per_repository(project: Project) -> None:
    status, out, err = project.run("lock")
    assert (status, err) == (0, "")
    entries = {entry.key: entry for entry in project.lock.actions.entries.values()}
    assert set(entries) == {("actions/checkout", "v6"), ("acme/deploy", "v1"), ("acme/deploy", "main")}
    checkout, deploy, main_branch = entries[("actions/checkout", "v6")], entries[("acme/deploy", "v1")], \
        entries[("acme/deploy", "main")]
    assert (checkout.ref_kind, checkout.frozen_tag) == ("moving", "v6.0.1")
    assert (deploy.ref_kind, deploy.frozen_tag) == ("moving", "v1.2.3")  # the annotated tag, peeled to its commit
    assert (main_branch.ref_kind, main_branch.frozen_tag) == ("branch", None)  # main moved past the release
    assert deploy.commit != main_branch.commit
    # Two refs of acme/deploy, one of actions/checkout: the same requests for each, one listing.
    assert project.server.requests["acme/deploy"] == project.server.requests["actions/checkout"] > 0
    assert "3 new, 0 kept, 0 dropped" in out


def test_pin_writes_the_commit_and_the_frozen_tag_and_check_passes(project: Project) -> None:
    assert project.run("check")[0] == 1  # unpinned actions
    project.run("lock")
    status, out, err = project.run("pin")
    assert (status, err) == (0, ""), out
    checkout, deploy = _commit(project, "actions/checkout", "v6"), _commit(project, "acme/deploy", "v1")
    main_branch = _commit(project, "acme/deploy", "main")
    assert project.workflow.read_text() == WORKFLOW.replace(
        "actions/checkout@v6", f"actions/checkout@{checkout} # v6.0.1").replace(
        "Acme/Deploy/setup@v1   # deploy it", f"Acme/Deploy/setup@{deploy}   # v1.2.3 # deploy it").replace(
        '"acme/deploy/setup@v1"', f'"acme/deploy/setup@{deploy}" # v1.2.3').replace(
        "release.yml@main", f"release.yml@{main_branch} # tag=main")
    pinned = project.workflow.read_bytes()
    assert project.run("pin")[0] == 0
    assert project.workflow.read_bytes() == pinned  # a second pin changes nothing
    status, out, _ = project.run("check")
    assert status == 0, out
    assert project.run("lock")[1].endswith("0 new, 3 kept, 0 dropped\n")  # the pinned uses find their entries


def test_a_moved_tag_is_verified_and_updated_with_the_pins(project: Project) -> None:
    project.run("lock")
    project.run("pin")
    old = _commit(project, "actions/checkout", "v6")
    new = project.repos.commit("actions/checkout", "v6.0.2")
    project.repos.annotated_tag("actions/checkout", "v6.0.2", new)
    project.repos.tag("actions/checkout", "v6", new)

    status, out, _ = project.run("verify", "--format", "json")
    moved = [item for item in json.loads(out)["actions"] if item["status"] == "moved"]
    assert (status, moved) == (0, [{"repository": "actions/checkout", "ref": "v6", "commit": old, "status": "moved",
                                   "current_commit": new, "message": None, "problems": []}])
    assert project.run("verify", "--fail-on-moved")[0] == 1

    status, out, err = project.run("update", "--format", "markdown")
    assert (status, err) == (0, "")
    assert "## Moved actions" in out and old in out and new in out and "`v6.0.2`" in out
    assert f"actions/checkout@{new} # v6.0.2" in project.workflow.read_text()
    assert old not in project.workflow.read_text()
    entry = project.lock.actions.entries[("actions/checkout", "v6")]
    assert (entry.commit, entry.frozen_tag) == (new, "v6.0.2")
    assert project.run("check")[0] == 0
    assert project.run("update")[1] == "nothing to update: no moving tag has moved\n"


def test_a_commit_only_a_fork_holds_is_reported(project: Project) -> None:
    forked = project.repos.fork("actions/checkout", "mallory/checkout")
    project.workflow.write_text(WORKFLOW.replace("actions/checkout@v6", f"actions/checkout@{forked}"))
    status, _, err = project.run("lock")
    assert status == 0
    assert "no tag or branch of actions/checkout points at this commit: it may exist only in a fork" in err
    status, out, _ = project.run("check")
    assert status == 1 and "action-mismatch" in out and "fork" in out
    status, out, _ = project.run("verify")
    assert status == 1 and f"no tag or branch of actions/checkout points at {forked}" in out


def test_a_commit_its_comment_does_not_name_is_a_mismatch(project: Project) -> None:
    project.run("lock")
    project.run("pin")
    forked = project.repos.fork("actions/checkout", "mallory/checkout")
    locked = _commit(project, "actions/checkout", "v6")
    project.workflow.write_text(project.workflow.read_text().replace(locked, forked))
    status, out, _ = project.run("check")
    assert status == 1 and "action-mismatch" in out and locked in out
    assert project.run("pin")[0] == 0
    assert f"actions/checkout@{locked} # v6.0.1" in project.workflow.read_text()


def test_a_deleted_tag_is_missing_and_update_refuses(project: Project) -> None:
    project.run("lock")
    project.repos.delete_tag("actions/checkout", "v6")
    status, out, _ = project.run("verify")
    assert status == 1 and "missing  actions/checkout@v6" in out and "any more" in out
    before = (project.work / "pinguard.lock").read_bytes()
    status, _, err = project.run("update")
    assert status == 2 and "actions/checkout@v6: missing" in err
    assert (project.work / "pinguard.lock").read_bytes() == before


def test_an_unknown_repository_leaves_the_lock_unwritten(project: Project) -> None:
    project.workflow.write_text(WORKFLOW.replace("actions/checkout@v6", "nobody/nothing@v1"))
    status, _, err = project.run("lock")
    assert status == 2 and "nobody/nothing" in err
    assert not (project.work / "pinguard.lock").exists()
