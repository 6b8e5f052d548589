"""Branches and tags of GitHub repositories, listed by the real `git ls-remote`: one listing a repository.

However many refs of a repository the workflows name, one `git ls-remote --heads --tags`
lists them all (protocol v2 asks the server only for those two namespaces, not the
thousands of `refs/pull/*`). Listings run on a pool of `workers` threads, each start
taking a turn `1 / rate` seconds after the one before, since every repository is on
the same host.

git runs in the environment the command line was handed, never the process's own,
and is told what it needs through `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_n` /
`GIT_CONFIG_VALUE_n`: protocol v2, no terminal prompt, no credential helper, no
transport but the base URL's, and the token, when there is one, as an Authorization
header for the base URL alone. The token is never in argv (any user of the machine
reads those) nor in a message: what git wrote on stderr has it cut out before a
message quotes it, and the variables that would make git trace its headers are not
passed on.

Each listing is bounded: its output to `max_bytes` and its time to `timeout`
seconds; past either git's whole process group is killed and the listing fails,
naming the repository.
"""
from __future__ import annotations

import base64
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from pinguard.errors import PinguardError
from pinguard.git.refs import RemoteRefs, parse_ls_remote
from pinguard.read.tool import CannotStart, ToolRun, TooMuchOutput, TooSlow, run_tool
from pinguard.untrusted_text import shown

GITHUB = "https://github.com"
TOKEN_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN")  # what GitHub Actions and the gh CLI read, in that order
_SERVER_VARIABLE = "GITHUB_SERVER_URL"  # set by GitHub Actions: github.com's, or a GitHub Enterprise Server's
_REPOSITORY = re.compile(r"[a-z0-9](?:-?[a-z0-9]){0,38}/[a-z0-9._-]{1,100}")
_TOKEN = re.compile(r"[\x21-\x7e]{1,4096}")  # printable, one word: a line break would add a header of its own
# Variables of the environment handed that would change what git is told, or make it print its headers.
_NOT_PASSED = re.compile(r"GIT_CONFIG_(?:COUNT|PARAMETERS|KEY_\d+|VALUE_\d+)|GIT_TRACE\w*|GIT_CURL_VERBOSE"
                         r"|GIT_REDACT_COOKIES|GIT_ASKPASS|SSH_ASKPASS|GIT_TERMINAL_PROMPT|GIT_ALLOW_PROTOCOL"
                         r"|GIT_PROTOCOL_FROM_USER|GIT_DIR|GIT_WORK_TREE")
_STDERR_KEPT = 16384  # bytes of git's stderr kept for a message
_QUOTED = 300  # characters of git's stderr a message quotes
_REDACTED = "[token]"


class GitError(PinguardError):
    """A repository's refs could not be listed; `repository` says which."""

    def __init__(self, repository: str, message: str) -> None:
        super().__init__(message)
        self.repository = repository


class GitNotFound(GitError):
    """No such repository, or one that is private and no token was given."""


class GitAuthRefused(GitError):
    """The server refused the token, or refused access (403)."""


class GitUnreachable(GitError):
    """The server could not be reached, or did not answer within the time."""


@dataclass(frozen=True)
class GitSettings:
    """How refs are listed: where, as whom, how fast, within what bounds, in what environment."""

    base_url: str = GITHUB
    token: str | None = field(default=None, repr=False)
    rate: float = 10.0  # listings started a second on the host
    workers: int = 8  # listings at once
    timeout: float = 30.0  # seconds one listing may take
    max_bytes: int = 8 * 1024 * 1024  # of one listing's output
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # the environment git runs in

    def __post_init__(self) -> None:
        address = urlsplit(self.base_url)
        if address.scheme not in ("https", "http") or not address.hostname or address.username is not None \
                or address.password is not None or address.query or address.fragment:
            raise PinguardError(f"{shown(self.base_url, _QUOTED)}: not an http(s) URL of a git server "
                                f"({_SERVER_VARIABLE})")
        if self.token is not None and not _TOKEN.fullmatch(self.token):
            raise PinguardError(f"the token ({' or '.join(TOKEN_VARIABLES)}) is not one word of printable characters")
        if not (self.rate > 0 and self.workers >= 1 and self.timeout > 0 and self.max_bytes >= 1):
            raise PinguardError("git settings: rate, workers, timeout and max_bytes must be positive")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GitSettings:
        """Settings for the environment `env`: the server of `GITHUB_SERVER_URL` (github.com without it), the token
        of `GITHUB_TOKEN` or `GH_TOKEN` where either is set, git run in `env`."""
        token = next((env[name] for name in TOKEN_VARIABLES if env.get(name)), None)
        return cls(base_url=env.get(_SERVER_VARIABLE) or GITHUB, token=token, env=env)

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).netloc

    def url(self, repository: str) -> str:
        return f"{self.base_url.rstrip('/')}/{repository}"


class _Turns:
    """Starts spaced `1 / rate` seconds apart on one host, shared by every thread of the pool."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._interval = 1 / rate
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self._interval
        if start > now:
            self._sleep(start - now)


class GitRemote:
    """Lists refs of repositories on one server; `requests` counts the listings it started (one a repository a
    call of `list_refs`, however many refs of it are asked about)."""

    def __init__(self, settings: GitSettings) -> None:
        self.settings = settings
        self._turns = _Turns(settings.rate)
        self._requests = 0
        self._count_lock = threading.Lock()
        self._environment = _git_environment(settings)
        self._git = shutil.which("git", path=settings.env.get("PATH", os.defpath)) or "git"

    @property
    def requests(self) -> int:
        return self._requests

    def list_refs(self, repositories: Iterable[str]) -> dict[str, RemoteRefs | PinguardError]:
        """Each distinct repository (owner/repo, compared lower-cased) to its refs, or to the error that stopped its
        listing: one failing does not stop the others."""
        distinct = sorted({repository.lower() for repository in repositories})
        if not distinct:
            return {}
        with ThreadPoolExecutor(max_workers=min(self.settings.workers, len(distinct)),
                                thread_name_prefix="ls-remote") as pool:
            return dict(zip(distinct, pool.map(self._listed, distinct), strict=True))

    def refs(self, repository: str) -> RemoteRefs:
        """The refs of one repository; GitError when they cannot be listed."""
        if not _REPOSITORY.fullmatch(repository) or repository.partition("/")[2] in (".", ".."):
            raise GitError(repository, f"{shown(repository, _QUOTED)}: not a GitHub owner/repo")
        self._turns.take()
        with self._count_lock:
            self._requests += 1
        url = self.settings.url(repository)
        listing = self._list(url, repository)
        if listing.status != 0:
            raise _failure(repository, url, self.settings, listing.status, self._redacted(listing.err))
        try:
            return parse_ls_remote(listing.out.decode("utf-8"), repository)
        except ValueError as error:  # UnicodeDecodeError included
            raise GitError(repository, f"{repository}: {url} listed refs git's grammar refuses: {error}") from None

    def _list(self, url: str, repository: str) -> ToolRun:
        """`git ls-remote` of `url`, bounded; GitError past `max_bytes` of output or `timeout` seconds."""
        settings = self.settings
        try:
            return run_tool([self._git, "ls-remote", "--heads", "--tags", "--", url], self._environment,
                            timeout=settings.timeout, max_out=settings.max_bytes, err_kept=_STDERR_KEPT)
        except CannotStart as error:
            raise GitError(repository, f"{repository}: cannot run git ({self._git}): {error}") from None
        except TooMuchOutput:
            raise GitError(repository, f"{repository}: the listing of its refs ran past {settings.max_bytes} "
                                       f"bytes; git stopped") from None
        except TooSlow:
            raise GitUnreachable(repository, f"{repository}: the listing of its refs from {settings.host} did not "
                                             f"finish within {settings.timeout:g} s: the time ran out, git "
                                             f"stopped") from None

    def _listed(self, repository: str) -> RemoteRefs | PinguardError:
        try:
            return self.refs(repository)
        except PinguardError as error:
            return error

    def _redacted(self, stderr: bytes) -> str:
        text = stderr.decode("utf-8", "replace")
        token = self.settings.token
        if token:
            for secret in (_basic(token), token):
                text = text.replace(secret, _REDACTED)
        return text


def list_refs(repositories: Iterable[str], settings: GitSettings) -> dict[str, RemoteRefs | PinguardError]:
    """`GitRemote(settings).list_refs(repositories)`, for a caller that does not count the listings."""
    return GitRemote(settings).list_refs(repositories)


def _basic(token: str) -> str:
    return base64.b64encode(f"x-access-token:{token}".encode()).decode("ascii")


def _git_environment(settings: GitSettings) -> dict[str, str]:
    """The environment handed, less what would change what git is told, plus the configuration of a listing."""
    environment = {name: value for name, value in settings.env.items() if not _NOT_PASSED.fullmatch(name)}
    scheme = urlsplit(settings.base_url).scheme
    config = [("protocol.version", "2"), ("credential.helper", ""), ("core.askPass", ""),
              ("protocol.allow", "never"), (f"protocol.{scheme}.allow", "always")]
    if settings.token:
        config.append((f"http.{settings.base_url.rstrip('/')}/.extraHeader",
                       f"Authorization: Basic {_basic(settings.token)}"))
    environment.update({"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_COUNT": str(len(config))})
    for number, (key, value) in enumerate(config):
        environment[f"GIT_CONFIG_KEY_{number}"] = key
        environment[f"GIT_CONFIG_VALUE_{number}"] = value
    return environment


def _failure(repository: str, url: str, settings: GitSettings, code: int, stderr: str) -> GitError:
    """The error git's exit and stderr say, the stderr's last `fatal:` line (or last line) quoted."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith("fatal:")]
    said = f"; git said: {shown((fatal or lines or [f'exit status {code}'])[-1], _QUOTED)}"
    lowered = stderr.lower()
    if any(sign in lowered for sign in ("could not read username", "terminal prompts disabled",
                                        "authentication failed", "error: 401")):
        if settings.token:
            return GitAuthRefused(repository, f"{repository}: {settings.host} refused the token{said}")
        return GitNotFound(repository, f"{repository}: not found at {url}, or private: no token was given "
                                       f"({' or '.join(TOKEN_VARIABLES)}){said}")
    if "not found" in lowered or "error: 404" in lowered:
        whom = ", or the token may not read it" if settings.token else ""
        return GitNotFound(repository, f"{repository}: repository not found at {url}{whom}{said}")
    if "error: 403" in lowered:
        return GitAuthRefused(repository, f"{repository}: {settings.host} refused access (403: a rate limit, or no "
                                          f"permission){said}")
    if "returned error: 5" in lowered:
        return GitError(repository, f"{repository}: {settings.host} failed to answer (a server error){said}")
    if any(sign in lowered for sign in ("could not resolve", "failed to connect", "couldn't connect",
                                        "connection refused", "timed out", "unable to access", "ssl")):
        return GitUnreachable(repository, f"{repository}: cannot connect to {settings.host}{said}")
    return GitError(repository, f"{repository}: git ls-remote {url} failed (exit status {code}){said}")
