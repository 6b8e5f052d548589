"""List the refs 50 workflows name: pinguard's one listing a repository beside a `git ls-remote URL REF` loop.

Twelve repositories are built with real git (`testing/git_server.py`), each with three
commits, frozen tags (`v1.0.0`, `v1.1.0`, `v2.0.0`; some annotated), moving tags (`v1`,
`v2`) and branches (`main`, `release/v2`), and served on loopback by git's own
`git-http-backend`, every request waiting `--delay` ms first (a network's round trip).
Fifty workflows are generated as text, each step `uses: owner/repo[/path]@ref` over
those repositories and refs, seeded; the `owner/repo@ref` pairs are read back from them
with a regular expression.

Timed, each the best of `--repeat` runs, the server's request count reset before each:

- pinguard: `GitRemote.list_refs` over the distinct repositories (one `git ls-remote
  --heads --tags` each, on `workers` threads), at its default pace and with the pace
  lifted (`--rate`);
- `pinguard lock` on the workflows written out (reading them, listing, writing the
  lockfile), its commits read back from the lockfile;
- the loop a script would write: `git ls-remote URL REF 'REF^{}'` for every
  distinct (repository, ref), one after another (without the second pattern git
  leaves out an annotated tag's peeled line, and the script would take the tag
  object for the commit).

Both must agree on every ref's commit. Run: `.venv/bin/python benchmarks/actions_lock.py
[--delay 50] [--repeat 3] [--workflows 50]`.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pinguard.cli import main as pinguard_main
from pinguard.git.remote import GitRemote, GitSettings
from pinguard.lock import lockfile
from testing.git_server import GitRepos, GitServer, serve_git

OWNERS = ("actions", "docker", "aws-actions", "github", "astral-sh", "pypa")
NAMES = ("checkout", "setup-python", "build-push-action", "configure-aws-credentials", "codeql-action", "setup-uv",
         "gh-action-pypi-publish", "cache", "upload-artifact", "login-action", "setup-buildx-action", "setup-node")
FROZEN = ("v1.0.0", "v1.1.0", "v2.0.0")
MOVING = ("v1", "v2")
BRANCHES = ("main", "release/v2")
REFS = (*FROZEN, *MOVING, *BRANCHES)
USES = re.compile(r"uses:\s*([A-Za-z0-9-]+/[A-Za-z0-9._-]+)(?:/[^@\s]*)?@([^\s#]+)")
ENV = {"PATH": os.environ.get("PATH", os.defpath), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


@dataclass
class Run:
    name: str
    wall: float
    listings: int  # git processes started
    requests: int  # HTTP requests the server answered
    commits: dict[tuple[str, str], str | None]


def _build(repos: GitRepos) -> list[str]:
    repositories = [f"{OWNERS[index % len(OWNERS)]}/{name}" for index, name in enumerate(NAMES)]
    for number, repository in enumerate(repositories):
        repos.create(repository)
        one, two, three = (repos.commit(repository, f"{repository} {step}") for step in range(3))
        for tag, commit in zip(FROZEN, (one, two, three), strict=True):
            if number % 2:
                repos.annotated_tag(repository, tag, commit, f"release {tag}")
            else:
                repos.tag(repository, tag, commit)
        repos.tag(repository, "v1", two)
        repos.tag(repository, "v2", three)
        repos.branch(repository, "release/v2", three)
    return repositories


def _workflows(repositories: list[str], count: int, seed: int = 7) -> list[str]:
    draw = random.Random(seed)
    texts = []
    for number in range(count):
        steps = []
        for _ in range(draw.randint(3, 8)):
            repository, ref = draw.choice(repositories), draw.choice(REFS)
            path = "/init" if draw.random() < 0.1 else ""
            steps.append(f"      - uses: {repository}{path}@{ref}\n")
        texts.append(f"name: workflow {number}\non: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
                     + "".join(steps))
    return texts


def _pinguard(server: GitServer, pairs: list[tuple[str, str]], rate: float | None) -> Run:
    settings = GitSettings(base_url=server.url, env=ENV)
    if rate is not None:
        settings = replace(settings, rate=rate)
    remote = GitRemote(settings)
    start = time.perf_counter()
    listed = remote.list_refs(repository for repository, _ in pairs)
    wall = time.perf_counter() - start
    commits = {}
    for repository, ref in pairs:
        refs = listed[repository]
        commits[repository, ref] = None if isinstance(refs, Exception) else refs.lookup(ref)
    name = f"pinguard list_refs, {settings.workers} workers, {settings.rate:g}/s"
    return Run(name, wall, remote.requests, server.total, commits)


def _lock(server: GitServer, pairs: list[tuple[str, str]], texts: list[str], work: Path) -> Run:
    """`pinguard lock` on the workflows, from an empty lockfile each run."""
    folder = work / ".github" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    for number, text in enumerate(texts):
        (folder / f"w{number}.yml").write_text(text)
    lock = work / "pinguard.lock"
    lock.unlink(missing_ok=True)
    env = {**ENV, "GITHUB_SERVER_URL": server.url, "HOME": str(work)}
    start = time.perf_counter()
    status = pinguard_main(["lock", "-q", "--lockfile", str(lock), str(work)], env=env)
    wall = time.perf_counter() - start
    entries = lockfile.read(lock).actions.entries if status == 0 else {}
    commits = {pair: entry.commit if (entry := entries.get(pair)) else None for pair in pairs}
    return Run("pinguard lock (the command, 50 files)", wall, len({r for r, _ in pairs}), server.total, commits)


def _loop(server: GitServer, pairs: list[tuple[str, str]]) -> Run:
    commits = {}
    start = time.perf_counter()
    for repository, ref in pairs:
        done = subprocess.run(["git", "-c", "protocol.version=2", "ls-remote", f"{server.url}/{repository}", ref,
                               f"{ref}^{{}}"],
                              capture_output=True, text=True, env=ENV, check=True, timeout=60)
        commits[repository, ref] = _first(done.stdout, ref)
    wall = time.perf_counter() - start
    return Run("git ls-remote URL REF REF^{}, one after another", wall, len(pairs), server.total, commits)


def _first(listing: str, ref: str) -> str | None:
    """The commit a script takes from `git ls-remote URL REF`: a tag's peeled line, the tag, then the branch."""
    found = {name: commit for commit, name in (line.split("\t") for line in listing.splitlines())}
    for name in (f"refs/tags/{ref}^{{}}", f"refs/tags/{ref}", f"refs/heads/{ref}"):
        if name in found:
            return found[name]
    return None


def _best(run: Callable[[], Run], server: GitServer, repeat: int) -> Run:
    runs = []
    for _ in range(repeat):
        server.requests.clear()
        runs.append(run())
    return min(runs, key=lambda each: each.wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=50.0, help="milliseconds each request waits (default 50)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, the fastest kept (default 3)")
    parser.add_argument("--workflows", type=int, default=50, help="workflows generated (default 50)")
    parser.add_argument("--rate", type=float, default=1000.0, help="pinguard's lifted pace, listings/s (default 1000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pinguard-bench-") as tmp, \
            serve_git(Path(tmp), delay=args.delay / 1000) as server:
        repositories = _build(GitRepos(Path(tmp)))
        texts = _workflows(repositories, args.workflows)
        written = [(match[1].lower(), match[2]) for text in texts for match in USES.finditer(text)]
        pairs = sorted(set(written))
        print(f"{len(texts)} workflows, {len(written)} uses: {len(pairs)} distinct (repository, ref) in "
              f"{len({repository for repository, _ in pairs})} repositories; every request waits {args.delay:g} ms; "
              f"best of {args.repeat}")
        runs = [_best(lambda: _loop(server, pairs), server, args.repeat),
                _best(lambda: _pinguard(server, pairs, None), server, args.repeat),
                _best(lambda: _pinguard(server, pairs, args.rate), server, args.repeat),
                _best(lambda: _lock(server, pairs, texts, Path(tmp) / "work"), server, args.repeat)]
    baseline = runs[0]
    print(f"{'':48} {'wall s':>7} {'git runs':>8} {'requests':>8} {'req/repo':>8} {'loop/this':>9}  agree")
    for run in runs:
        per_repository = run.requests / len({repository for repository, _ in pairs})
        agree = "yes" if run.commits == baseline.commits and None not in run.commits.values() else "NO"
        print(f"{run.name:48} {run.wall:7.2f} {run.listings:8} {run.requests:8} {per_repository:8.2f} "
              f"{baseline.wall / run.wall:8.1f}x  {agree}")
    return 0 if all(run.commits == baseline.commits for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
