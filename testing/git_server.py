"""A real git server on loopback for tests, and repositories built in them with real `git`.

git's own `git-http-backend` answers, run as CGI by a small `ThreadingHTTPServer`: it
serves `<root>/<owner>/<repo>.git` at `/<owner>/<repo>` (and `/<owner>/<repo>.git`),
protocol v2 included (the `Git-Protocol` header handed on as `GIT_PROTOCOL`). The
server counts requests per repository, can wait a fixed delay before each answer (a
network's round trip), and can require a token the way GitHub takes one: `Authorization:
Basic base64(x-access-token:TOKEN)` or `Bearer TOKEN`, else 401 with a Basic challenge.

`GitRepos` builds the repositories: bare ones, commits made with plumbing (no work
tree), lightweight and annotated tags, branches, tags moved and deleted, and a fork
whose commit the upstream holds with no ref naming it, as GitHub's forks share their
objects with the upstream.
"""
from __future__ import annotations

import base64
import os
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

# A fixed identity and no configuration of the machine's, so that the same steps make the same objects anywhere.
_IDENTITY = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_COMMITTER_NAME": "Test",
             "GIT_COMMITTER_EMAIL": "test@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
_EPOCH = 1_700_000_000  # the first commit's time; each next commit is a second later
_BODY_LIMIT = 1 << 20  # bytes of a request body the server reads


def http_backend() -> Path:
    """git's http backend, in git's exec path."""
    exec_path = subprocess.run(["git", "--exec-path"], check=True, capture_output=True, text=True).stdout.strip()
    return Path(exec_path) / "git-http-backend"


@dataclass
class GitServer:
    url: str  # http://127.0.0.1:PORT
    root: Path  # holds <owner>/<repo>.git
    delay: float = 0.0  # seconds each answer waits
    token: str | None = None  # when set, every request must carry it
    requests: Counter[str] = field(default_factory=Counter)  # owner/repo: requests made, refused ones included
    protocols: Counter[str] = field(default_factory=Counter)  # the Git-Protocol headers of the requests ("" none)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.requests.values())

    def count(self, repository: str, protocol: str) -> None:
        with self._lock:
            self.requests[repository] += 1
            self.protocols[protocol] += 1

    def authorized(self, header: str | None) -> bool:
        if self.token is None:
            return True
        basic = base64.b64encode(f"x-access-token:{self.token}".encode()).decode("ascii")
        return header in (f"Basic {basic}", f"Bearer {self.token}")


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the tests read the counts."""

    def _answer(self) -> None:
        state = self.server.state
        address = urlsplit(self.path)
        repository, rest = _repository(address.path)
        state.count(repository, self.headers.get("Git-Protocol", ""))
        time.sleep(state.delay)
        body = self._body()
        if not state.authorized(self.headers.get("Authorization")):
            self._send(401, {"WWW-Authenticate": 'Basic realm="git"', "Content-Type": "text/plain"}, b"token\n")
            return
        self._cgi(f"/{repository}.git{rest}", address.query, body)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while (size := int(self.rfile.readline().split(b";")[0], 16)) > 0:
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(chunks)[:_BODY_LIMIT]
        return self.rfile.read(min(int(self.headers.get("Content-Length") or 0), _BODY_LIMIT))

    def _cgi(self, path_info: str, query: str, body: bytes) -> None:
        environment = {
            "GIT_PROJECT_ROOT": str(self.server.state.root), "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command, "QUERY_STRING": query, "PATH_INFO": path_info,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0], "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
        }
        if protocol := self.headers.get("Git-Protocol"):
            environment["GIT_PROTOCOL"] = protocol
        if encoding := self.headers.get("Content-Encoding"):
            environment["HTTP_CONTENT_ENCODING"] = encoding
        done = subprocess.run([str(self.server.backend)], input=body, capture_output=True, env=environment,
                              timeout=60, check=False)
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        headers = dict(line.split(": ", 1) for line in head.decode("latin-1").split("\r\n") if ": " in line)
        status = int(headers.pop("Status", "200").split()[0])
        self._send(status, headers, payload)

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _repository(path: str) -> tuple[str, str]:
    """`/owner/repo[.git]/rest` as ("owner/repo", "/rest")."""
    owner, _, after = path.lstrip("/").partition("/")
    name, _, rest = after.partition("/")
    return f"{owner}/{name.removesuffix('.git')}", f"/{rest}" if rest else ""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: GitServer, backend: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state
        self.backend = backend


@contextmanager
def serve_git(root: Path, *, delay: float = 0.0, token: str | None = None) -> Iterator[GitServer]:
    """A git server of the repositories under `root`, on a free loopback port, until the block ends."""
    state = GitServer(url="", root=root, delay=delay, token=token)
    server = _Server(state, http_backend())
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="git-server", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class GitRepos:
    """Bare repositories under `root` (`<owner>/<repo>.git`), changed with real git commands."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._commits = 0  # commits made: each is a second after the one before, so none two are the same

    def path(self, repository: str) -> Path:
        return self.root / f"{repository}.git"

    def create(self, repository: str) -> Path:
        """An empty bare repository, its default branch `main`."""
        path = self.path(repository)
        path.parent.mkdir(parents=True, exist_ok=True)
        _git(self.root, "init", "--quiet", "--bare", "--initial-branch=main", str(path))
        return path

    def commit(self, repository: str, message: str = "change", branch: str = "main") -> str:
        """A commit of one file holding `message`, on top of `branch` (made where it is not there yet)."""
        path = self.path(repository)
        blob = _git(path, "hash-object", "-w", "--stdin", stdin=message)
        tree = _git(path, "mktree", stdin=f"100644 blob {blob}\tREADME\n")
        parent = _git(path, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
        self._commits += 1
        when = {"GIT_AUTHOR_DATE": f"{_EPOCH + self._commits} +0000",
                "GIT_COMMITTER_DATE": f"{_EPOCH + self._commits} +0000"}
        commit = _git(path, "commit-tree", tree, *(("-p", parent) if parent else ()), "-m", message, extra=when)
        _git(path, "update-ref", f"refs/heads/{branch}", commit)
        return commit

    def tag(self, repository: str, name: str, commit: str) -> None:
        """A lightweight tag, made or moved."""
        _git(self.path(repository), "update-ref", f"refs/tags/{name}", commit)

    def annotated_tag(self, repository: str, name: str, commit: str, message: str = "release") -> str:
        """An annotated tag of `commit`, made or moved: the tag object's name (ls-remote peels it to `commit`)."""
        path = self.path(repository)
        _git(path, "tag", "--force", "--annotate", "--message", message, name, commit)
        return _git(path, "rev-parse", f"refs/tags/{name}")

    def branch(self, repository: str, name: str, commit: str) -> None:
        _git(self.path(repository), "update-ref", f"refs/heads/{name}", commit)

    def delete_tag(self, repository: str, name: str) -> None:
        _git(self.path(repository), "update-ref", "-d", f"refs/tags/{name}")

    def fork(self, upstream: str, fork: str, message: str = "a fork's change") -> str:
        """`fork`, a copy of `upstream` with one more commit on its `main`: that commit, which the upstream then
        holds too with no ref naming it, as GitHub's forks share the upstream's objects."""
        self.path(fork).parent.mkdir(parents=True, exist_ok=True)
        _git(self.root, "clone", "--quiet", "--bare", str(self.path(upstream)), str(self.path(fork)))
        commit = self.commit(fork, message)
        _git(self.path(upstream), "fetch", "--quiet", "--no-tags", str(self.path(fork)), "main")
        return commit


def _git(where: Path, *args: str, stdin: str | None = None, extra: dict[str, str] | None = None,
         check: bool = True) -> str:
    """`git -C where args`, its output stripped; the environment fixed but for PATH, where git is found."""
    environment = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(where), **_IDENTITY, **(extra or {})}
    done = subprocess.run(["git", "-C", str(where), *args], input=stdin, capture_output=True, text=True,
                          env=environment, check=False, timeout=60)
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()
