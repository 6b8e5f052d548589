"""What a GitHub Actions `uses:` names: an action or reusable workflow of a repository at a ref (records, no I/O).

    uses: owner/repo@ref                                  an action at the root of a repository
    uses: owner/repo/path/to/dir@ref                      an action in a folder of it
    uses: owner/repo/.github/workflows/build.yml@ref      a reusable workflow
    uses: ./path                                          local: this repository, at the commit that runs
    uses: docker://IMAGE                                  an image, read as one (sources/workflow.py)

The grammar is GitHub's: owner names of letters, digits and single hyphens (at most 39),
repository names of letters, digits, `.`, `_` and `-` (at most 100), and a ref as git
allows one (`git check-ref-format`). Owner and repository compare case-insensitively,
as GitHub compares them: `repository` is lower-cased. A ref of 40 (or 64) lowercase hex
digits is a commit: the only ref nobody can move.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pinguard.errors import InvalidReference

LOCAL = "./"
DOCKER = "docker://"
_MAX_REF = 255
_OWNER = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}")
_REPOSITORY = re.compile(r"[A-Za-z0-9._-]{1,100}")
_PATH_PART = re.compile(r"[A-Za-z0-9._-]+")
COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# What `git check-ref-format` refuses anywhere in a ref: control characters, space, ~ ^ : ? * [ \ and `..`, `@{`.
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


@dataclass(frozen=True, slots=True)
class ActionRef:
    """`owner/repo[/path]@ref` as written; `repository` is `owner/repo` lower-cased, the key the lock files it by."""

    owner: str
    repo: str
    path: str  # "" for the repository's root action
    ref: str

    @property
    def repository(self) -> str:
        return f"{self.owner}/{self.repo}".lower()

    @property
    def pinned(self) -> bool:
        """Whether the ref is a commit: nothing anybody pushes changes what it runs."""
        return COMMIT.fullmatch(self.ref) is not None

    def with_ref(self, ref: str) -> ActionRef:
        return ActionRef(self.owner, self.repo, self.path, ref)

    def __str__(self) -> str:
        path = f"/{self.path}" if self.path else ""
        return f"{self.owner}/{self.repo}{path}@{self.ref}"


def is_local(value: str) -> bool:
    """`./…`: an action or workflow of the repository that runs, at its own commit: nothing to pin."""
    return value.startswith(LOCAL)


def is_docker(value: str) -> bool:
    """`docker://IMAGE`: an image, which the image sources read."""
    return value.startswith(DOCKER)


def parse_uses(value: str) -> ActionRef:
    """The action `value` names; InvalidReference, saying what is wrong, for anything that is not
    `owner/repo[/path]@ref` (local and docker values included: callers tell those apart first)."""
    name, at, ref = value.rpartition("@")
    if not at:
        raise InvalidReference(f"{value!r}: no `@ref`: GitHub runs an action only at a tag, branch or commit")
    parts = name.split("/")
    if len(parts) < 2:
        raise InvalidReference(f"{value!r}: not owner/repo[/path]@ref")
    owner, repo, *path = parts
    if not _OWNER.fullmatch(owner):
        raise InvalidReference(f"{value!r}: {owner!r} is no GitHub owner name")
    if not _REPOSITORY.fullmatch(repo) or repo in (".", ".."):
        raise InvalidReference(f"{value!r}: {repo!r} is no GitHub repository name")
    if any(not _PATH_PART.fullmatch(part) or part in (".", "..") for part in path):
        raise InvalidReference(f"{value!r}: the path {'/'.join(path)!r} is not a folder of the repository")
    if not is_ref(ref):
        raise InvalidReference(f"{value!r}: {ref!r} is no git ref")
    return ActionRef(owner, repo, "/".join(path), ref)


def is_ref(ref: str) -> bool:
    """Whether git accepts `ref` as the name of a tag or branch (`git check-ref-format`, one level allowed)."""
    return bool(ref) and len(ref) <= _MAX_REF and _BAD_REF.search(ref) is None\
        and not ref.startswith(("/", "-", ".")) and not ref.endswith(("/", ".", ".lock"))


# The version comment after a pinned `uses:` (`@<commit> # v6.0.1`), as the tools that pin actions write it.
_FIRST_WORD = re.compile(r"#[ \t]*(?P<word>[^ \t]+)")
_MARKED = (re.compile(r"ratchet:[^ \t]*@"), re.compile(r"pin@"), re.compile(r"tag="))  # what precedes the ref
_DIGIT = re.compile(r"[0-9]")


@dataclass(frozen=True, slots=True)
class VersionNote:
    """The ref a comment names as the version of a pinned action, and where in the comment it is written."""

    ref: str
    start: int  # [start, end) in the comment's text, `#` at 0
    end: int
    bare: bool  # the comment's first word itself, no `tag=`, `ratchet:…@` or `pin@` before it


def read_version(comment: str) -> VersionNote | None:
    """The version a comment (`#` to the end of its line) names in its first word, else None.

    Accepted, first word only:
      `# tag=v6.0.1` (Renovate)        -> v6.0.1
      `# ratchet:owner/repo@v6` (ratchet) -> v6, the part after the last `@`
      `# pin@v6` (pin-github-action)    -> v6
      `# v6.0.1`, `# 1.2` (pinact, Dependabot, Renovate) -> the word, only when it holds a digit:
          `# checkout the code` is free text, and names no version.
    The ref must be one git accepts (`is_ref`) and no commit: a commit is no version anybody reads.
    """
    first = _FIRST_WORD.match(comment)
    if first is None:
        return None
    start, end = first.span("word")
    bare = True
    for marked in _MARKED:
        prefix = marked.match(comment, start, end)  # greedy: ratchet's runs to the word's last `@`
        if prefix is not None:
            start, bare = prefix.end(), False
            break
    ref = comment[start:end]
    if not is_ref(ref) or COMMIT.fullmatch(ref) or (bare and _DIGIT.search(ref) is None):
        return None
    return VersionNote(ref, start, end, bare)


def version_word(version: str) -> str:
    """How `version` is written as a comment's first word so that `read_version` reads it back: as itself
    when it holds a digit, else as `tag=<version>` (a bare `main` would read as free text)."""
    note = read_version(f"# {version}")
    return version if note is not None and note.bare and note.ref == version else f"tag={version}"
