"""The git server the tests list refs from, reached by plain `git ls-remote`, and the repositories built in it."""
from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

from testing.git_server import GitRepos, GitServer, serve_git


def _ls_remote(url: str, *config: str) -> subprocess.CompletedProcess[str]:
    options = [item for pair in zip(["-c"] * len(config), config, strict=True) for item in pair]
    environment = {"PATH": os.environ.get("PATH", os.defpath), "GIT_TERMINAL_PROMPT": "0",
                   "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    return subprocess.run(["git", *options, "-c", "protocol.version=2", "ls-remote", url], capture_output=True,
                          text=True, env=environment, timeout=60, check=False)


def _listing(text: str) -> dict[str, str]:
    return {name: commit for commit, name in (line.split("\t") for line in text.splitlines())}


def test_a_repository_is_served_with_and_without_dot_git_over_protocol_2(repos: GitRepos, server: GitServer) -> None:
    repos.create("acme/tool")
    commit = repos.commit("acme/tool")
    for url in (f"{server.url}/acme/tool", f"{server.url}/acme/tool.git"):
        assert _listing(_ls_remote(url).stdout)["refs/heads/main"] == commit
    assert server.requests == {"acme/tool": 4} and server.total == 4  # v2: the advertisement, then ls-refs
    assert server.protocols == {"version=2": 4}


def test_tags_branches_and_their_changes(repos: GitRepos, server: GitServer) -> None:
    repos.create("acme/tool")
    first, second = repos.commit("acme/tool", "one"), repos.commit("acme/tool", "two")
    repos.tag("acme/tool", "v1", first)
    tag_object = repos.annotated_tag("acme/tool", "v2", second)
    repos.tag("acme/tool", "gone", first)
    repos.branch("acme/tool", "release", first)
    url = f"{server.url}/acme/tool"
    listed = _listing(_ls_remote(url).stdout)
    assert listed["refs/tags/v1"] == first and listed["refs/heads/release"] == first
    assert listed["refs/tags/v2"] == tag_object != second and listed["refs/tags/v2^{}"] == second
    repos.tag("acme/tool", "v1", second)
    repos.delete_tag("acme/tool", "gone")
    listed = _listing(_ls_remote(url).stdout)
    assert listed["refs/tags/v1"] == second and "refs/tags/gone" not in listed


def test_a_forks_commit_is_held_by_the_upstream_with_no_ref_naming_it(repos: GitRepos, server: GitServer) -> None:
    repos.create("acme/tool")
    repos.commit("acme/tool")
    forked = repos.fork("acme/tool", "mallory/tool")
    upstream = repos.path("acme/tool")
    assert subprocess.run(["git", "-C", str(upstream), "cat-file", "-t", forked], capture_output=True, text=True,
                          check=True).stdout.strip() == "commit"
    assert forked not in _ls_remote(f"{server.url}/acme/tool").stdout
    assert _listing(_ls_remote(f"{server.url}/mallory/tool").stdout)["refs/heads/main"] == forked


def test_the_same_steps_make_the_same_commits_anywhere(tmp_path: Path) -> None:
    made = []
    for folder in ("a", "b"):
        repos = GitRepos(tmp_path / folder)
        repos.create("acme/tool")
        made.append((repos.commit("acme/tool", "one"), repos.commit("acme/tool", "one")))
    assert made[0] == made[1] and made[0][0] != made[0][1]


def test_a_token_is_required_when_set(repos: GitRepos, tmp_path: Path) -> None:
    repos.create("acme/private")
    commit = repos.commit("acme/private")
    with serve_git(repos.root, token="s3cret") as server:
        url = f"{server.url}/acme/private"
        refused = _ls_remote(url)
        assert refused.returncode != 0 and "terminal prompts disabled" in refused.stderr
        basic = base64.b64encode(b"x-access-token:s3cret").decode()
        for header in (f"Authorization: Basic {basic}", "Authorization: Bearer s3cret"):
            assert commit in _ls_remote(url, f"http.extraHeader={header}").stdout
        assert _ls_remote(url, "http.extraHeader=Authorization: Bearer wrong").returncode != 0
