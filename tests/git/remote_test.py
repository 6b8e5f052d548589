"""Refs listed by the real `git ls-remote` from a real git server on loopback (`testing/git_server.py`)."""
from __future__ import annotations

import base64
import os
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pinguard.errors import PinguardError
from pinguard.git.refs import RemoteRefs
from pinguard.git.remote import (
    GitAuthRefused,
    GitError,
    GitNotFound,
    GitRemote,
    GitSettings,
    GitUnreachable,
    _Turns,
    list_refs,
)
from testing.git_server import GitRepos, GitServer, serve_git

TOKEN = "ghs_s3cretTOKENvalue"
ENV = {"PATH": os.environ.get("PATH", os.defpath)}



def _settings(url: str, **changes: object) -> GitSettings:
    """Settings for the server at `url`, the pace lifted (pacing is not what these tests measure)."""
    return replace(GitSettings(base_url=url, rate=1000.0, env=ENV), **changes)


def _refs(result: RemoteRefs | PinguardError) -> RemoteRefs:
    assert isinstance(result, RemoteRefs), result
    return result


def _error(result: RemoteRefs | PinguardError) -> PinguardError:
    assert isinstance(result, PinguardError), result
    return result


def test_tags_and_branches_are_listed_annotated_ones_peeled(repos: GitRepos, server: GitServer) -> None:
    repos.create("acme/tool")
    first, second = repos.commit("acme/tool", "one"), repos.commit("acme/tool", "two")
    repos.tag("acme/tool", "v1.0.0", first)
    tag_object = repos.annotated_tag("acme/tool", "v2.0.0", second)
    repos.branch("acme/tool", "release", first)
    refs = _refs(list_refs(["acme/tool"], _settings(server.url))["acme/tool"])
    assert refs.lookup("v1.0.0") == first and refs.lookup("v2.0.0") == second != tag_object
    assert refs.is_branch("release") and refs.lookup("release") == first and refs.lookup("main") == second
    assert refs.tags_at(second) == ("v2.0.0",) and refs.names(first)
    assert server.protocols == {"version=2": 2}  # protocol v2 asked: the advertisement, then ls-refs


def test_a_moved_tag_is_seen_moved_and_a_deleted_one_gone(repos: GitRepos, server: GitServer) -> None:
    repos.create("acme/tool")
    first, second = repos.commit("acme/tool", "one"), repos.commit("acme/tool", "two")
    repos.tag("acme/tool", "v1", first)
    repos.tag("acme/tool", "v1.0.0", first)
    remote = GitRemote(_settings(server.url))
    assert _refs(remote.list_refs(["acme/tool"])["acme/tool"]).lookup("v1") == first
    repos.tag("acme/tool", "v1", second)
    repos.delete_tag("acme/tool", "v1.0.0")
    again = _refs(remote.list_refs(["acme/tool"])["acme/tool"])
    assert again.lookup("v1") == second and again.lookup("v1.0.0") is None and not again.is_tag("v1.0.0")
    assert remote.requests == 2


def test_a_forks_commit_is_named_by_no_ref_of_the_upstream(repos: GitRepos, server: GitServer) -> None:
    repos.create("acme/tool")
    repos.tag("acme/tool", "v1", repos.commit("acme/tool"))
    forked = repos.fork("acme/tool", "mallory/tool")
    listed = list_refs(["acme/tool", "mallory/tool"], _settings(server.url))
    assert not _refs(listed["acme/tool"]).names(forked) and _refs(listed["acme/tool"]).tags_at(forked) == ()
    assert _refs(listed["mallory/tool"]).names(forked)


def test_one_listing_a_repository_however_many_refs_are_asked(repos: GitRepos, server: GitServer) -> None:
    repos.create("acme/tool")
    commit = repos.commit("acme/tool")
    tags = [f"v1.{minor}.0" for minor in range(20)]
    for tag in tags:
        repos.tag("acme/tool", tag, commit)
    remote = GitRemote(_settings(server.url))
    listed = remote.list_refs(["acme/tool", "Acme/Tool", "ACME/tool", "acme/tool"])
    assert list(listed) == ["acme/tool"]
    assert all(_refs(listed["acme/tool"]).lookup(tag) == commit for tag in tags)
    assert remote.requests == 1 and server.requests == {"acme/tool": 2}


def test_many_repositories_are_listed_at_once_every_one_answered(repos: GitRepos, server: GitServer) -> None:
    names = [f"owner{index}/repo{index}" for index in range(8)]
    commits = {}
    for name in names:
        repos.create(name)
        commits[name] = repos.commit(name, name)
        repos.tag(name, "v1", commits[name])
    server.delay = 0.05  # each answer waits, so listings overlap
    remote = GitRemote(_settings(server.url, workers=4))
    listed = remote.list_refs(names)
    assert {name: _refs(refs).lookup("v1") for name, refs in listed.items()} == commits
    assert remote.requests == 8 and server.requests == dict.fromkeys(names, 2)


def test_a_missing_repository_is_said_and_the_others_still_listed(repos: GitRepos, server: GitServer) -> None:
    repos.create("acme/tool")
    repos.commit("acme/tool")
    listed = list_refs(["acme/tool", "acme/missing", "not a/repo", "acme/.."], _settings(server.url))
    assert isinstance(listed["acme/tool"], RemoteRefs)
    missing = _error(listed["acme/missing"])
    assert isinstance(missing, GitNotFound) and missing.repository == "acme/missing"
    assert "acme/missing: repository not found" in str(missing)
    for name in ("not a/repo", "acme/.."):
        assert isinstance(listed[name], GitError) and "not a GitHub owner/repo" in str(listed[name])
    assert "not a/repo" not in server.requests and "acme/.." not in server.requests


def test_a_private_repository_takes_the_token_and_is_refused_without(repos: GitRepos) -> None:
    repos.create("acme/private")
    commit = repos.commit("acme/private")
    with serve_git(repos.root, token=TOKEN) as server:
        listed = list_refs(["acme/private"], _settings(server.url, token=TOKEN))
        assert _refs(listed["acme/private"]).lookup("main") == commit
        anonymous = _error(list_refs(["acme/private"], _settings(server.url))["acme/private"])
        assert isinstance(anonymous, GitNotFound) and "private: no token was given" in str(anonymous)
        wrong = _error(list_refs(["acme/private"], _settings(server.url, token="ghs_wrong"))["acme/private"])
        assert isinstance(wrong, GitAuthRefused) and "refused the token" in str(wrong) and "ghs_wrong" not in str(wrong)


def test_settings_read_the_server_and_the_token_from_the_environment_handed() -> None:
    settings = GitSettings.from_env({"GITHUB_SERVER_URL": "https://ghe.example.com", "GH_TOKEN": TOKEN})
    assert settings.base_url == "https://ghe.example.com" and settings.token == TOKEN
    assert GitSettings.from_env({"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}).token == "a"
    assert GitSettings.from_env({}) == GitSettings() and GitSettings().base_url == "https://github.com"
    assert TOKEN not in repr(settings)
    for url in ("ftp://example.com", "https://user:pw@example.com", "ext::sh -c evil", "https://"):
        with pytest.raises(PinguardError, match="not an http"):
            GitSettings(base_url=url)
    with pytest.raises(PinguardError, match="not one word") as raised:
        GitSettings(token="abc\r\nX-Evil: 1")
    assert "abc" not in str(raised.value)


class _Echo(BaseHTTPRequestHandler):
    """A hostile server: it says back, as git's remote error, the Authorization header it was sent."""

    def do_GET(self) -> None:
        said = f"ERR you sent {self.headers.get('Authorization', 'nothing')}\n".encode()
        body = b"001e# service=git-upload-pack\n0000" + f"{len(said) + 4:04x}".encode() + said
        self.send_response(200)
        self.send_header("Content-Type", "application/x-git-upload-pack-advertisement")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def echo() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_the_token_is_in_no_message_even_where_the_server_says_it_back(echo: str) -> None:
    tracing = {**ENV, "GIT_TRACE": "1", "GIT_CURL_VERBOSE": "1", "GIT_TRACE_CURL": "1", "GIT_TRACE_REDACT": "0",
               "GIT_TRACE_PACKET": "1"}
    error = _error(list_refs(["acme/tool"], _settings(echo, token=TOKEN, env=tracing))["acme/tool"])
    basic = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert "you sent Basic [token]" in str(error)  # the header was sent, and cut out of what git said
    assert TOKEN not in str(error) and basic not in str(error)


def test_a_listing_past_its_time_is_stopped_naming_the_repository(repos: GitRepos) -> None:
    repos.create("acme/slow")
    repos.commit("acme/slow")
    with serve_git(repos.root, delay=5.0) as server:
        error = _error(list_refs(["acme/slow"], _settings(server.url, timeout=0.5))["acme/slow"])
    assert isinstance(error, GitUnreachable) and error.repository == "acme/slow"
    assert "acme/slow" in str(error) and "within 0.5 s: the time ran out" in str(error)


def test_a_listing_past_its_bytes_is_stopped(repos: GitRepos, server: GitServer) -> None:
    repos.create("acme/big")
    commit = repos.commit("acme/big")
    for index in range(50):
        repos.tag("acme/big", f"v{index}", commit)
    error = _error(list_refs(["acme/big"], _settings(server.url, max_bytes=1000))["acme/big"])
    assert "acme/big: the listing of its refs ran past 1000 bytes" in str(error)
    assert isinstance(list_refs(["acme/big"], _settings(server.url, max_bytes=100_000))["acme/big"], RemoteRefs)


def test_a_server_nobody_answers_at_is_said(tmp_path: Path) -> None:
    with serve_git(tmp_path) as server:
        url = server.url  # a port free again once the server is closed
    error = _error(list_refs(["acme/tool"], _settings(url))["acme/tool"])
    assert isinstance(error, GitUnreachable) and "cannot connect to 127.0.0.1" in str(error)


def test_listings_start_a_turn_apart_on_the_host() -> None:
    waits: list[float] = []
    turns = _Turns(rate=4.0, clock=lambda: 10.0, sleep=waits.append)  # every start asked at the same moment
    for _ in range(4):
        turns.take()
    assert waits == [0.25, 0.5, 0.75]  # the first goes at once
