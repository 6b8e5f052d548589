"""A remote repository's branches and tags, as `git ls-remote` lists them (records, no I/O).

    3f4a...e1\trefs/heads/main
    9b0c...77\trefs/tags/v1
    5d21...0a\trefs/tags/v1^{}      the commit the annotated tag v1 points at

A tag maps to the commit it names: an annotated tag through the peeled `^{}` line
that follows it. What ls-remote does not peel (a tag of a tree or a blob) stays as
listed. Every line is checked, since the text comes from a server: a line that is
not `<hex>\\t<refname>` with a ref name git accepts is refused, naming the line.
Refs outside branches and tags (`HEAD`, `refs/pull/*`) are checked, then left out.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pinguard.untrusted_text import shown
from pinguard.uses import COMMIT

BRANCHES = "refs/heads/"
TAGS = "refs/tags/"
PEELED = "^{}"
_HEAD = "HEAD"
_LINE = 256  # characters of a line an error quotes
# What `git check-ref-format` refuses anywhere in a name: control characters, space, ~ ^ : ? * [ \, `..`, `@{`, `//`.
_BAD_NAME = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


@dataclass(frozen=True)
class RemoteRefs:
    """The branches and tags of `repository` (owner/repo), each by its short name, to the commit it names."""

    repository: str
    branches: Mapping[str, str]
    tags: Mapping[str, str]
    _by_commit: Mapping[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)
    _named: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_commit: dict[str, list[str]] = {}
        for tag, commit in self.tags.items():
            by_commit.setdefault(commit, []).append(tag)
        object.__setattr__(self, "_by_commit", {commit: tuple(sorted(tags)) for commit, tags in by_commit.items()})
        object.__setattr__(self, "_named", frozenset(self.tags.values()) | frozenset(self.branches.values()))

    def lookup(self, ref: str) -> str | None:
        """The commit `ref` names: `refs/tags/X`, `refs/heads/X`, or a short name, a tag before a branch of the
        same name as git's rev-parse rules take them; None where no tag or branch has that name."""
        if ref.startswith(TAGS):
            return self.tags.get(ref.removeprefix(TAGS))
        if ref.startswith(BRANCHES):
            return self.branches.get(ref.removeprefix(BRANCHES))
        return self.tags.get(ref, self.branches.get(ref))

    def is_tag(self, ref: str) -> bool:
        """Whether `ref` names a tag: `refs/tags/X`, or a short name (one that is a tag and a branch both is the
        tag, as in `lookup`)."""
        if ref.startswith(TAGS):
            return ref.removeprefix(TAGS) in self.tags
        return not ref.startswith(BRANCHES) and ref in self.tags

    def is_branch(self, ref: str) -> bool:
        """Whether `ref` names a branch: `refs/heads/X`, or a short name no tag shadows."""
        if ref.startswith(BRANCHES):
            return ref.removeprefix(BRANCHES) in self.branches
        return not ref.startswith(TAGS) and ref not in self.tags and ref in self.branches

    def tags_at(self, commit: str) -> tuple[str, ...]:
        """The tags that name `commit`, sorted."""
        return self._by_commit.get(commit, ())

    def names(self, commit: str) -> bool:
        """Whether any tag or branch points at `commit`: a commit none names may be a fork's, which GitHub
        serves under the upstream's name all the same."""
        return commit in self._named


def parse_ls_remote(text: str, repository: str) -> RemoteRefs:
    """The branches and tags `git ls-remote` printed for `repository`; ValueError naming the first line that is
    not `<hex>\\t<refname>` (hex of 40 or 64 lowercase digits, one length throughout), a name git would refuse,
    a name listed twice, or a peeled line that does not follow its tag."""
    branches: dict[str, str] = {}
    tags: dict[str, str] = {}
    seen: set[str] = set()
    previous = ""
    width = 0
    # Lines end at "\n" alone: any other break (\r, \x85, \u2028) is a character of a line, which a ref name refuses.
    for number, line in enumerate(text.removesuffix("\n").split("\n") if text else (), 1):
        commit, name = _split(line, number)
        width = width or len(commit)
        if len(commit) != width:
            raise _malformed(number, line, "object names of two lengths in one listing")
        if name.endswith(PEELED):
            if name.removesuffix(PEELED) != previous or not previous.startswith(TAGS):
                raise _malformed(number, line, "a peeled line that does not follow its tag")
            tags[previous.removeprefix(TAGS)] = commit
            previous = ""
            continue
        if name in seen:
            raise _malformed(number, line, "the ref is listed twice")
        seen.add(name)
        previous = name
        if name.startswith(TAGS):
            tags[name.removeprefix(TAGS)] = commit
        elif name.startswith(BRANCHES):
            branches[name.removeprefix(BRANCHES)] = commit
    return RemoteRefs(repository, branches, tags)


def _split(line: str, number: int) -> tuple[str, str]:
    commit, tab, name = line.partition("\t")
    if not tab:
        raise _malformed(number, line, "not `<object name><tab><ref name>`")
    if not COMMIT.fullmatch(commit):
        raise _malformed(number, line, "the object name is not 40 or 64 lowercase hex digits")
    if not valid_ref_name(name.removesuffix(PEELED)):
        raise _malformed(number, line, "not a ref name git accepts")
    return commit, name


def valid_ref_name(name: str) -> bool:
    """Whether git accepts `name` as a full ref name (`git check-ref-format`), or it is `HEAD`."""
    if name == _HEAD:
        return True
    parts = name.split("/")
    return (len(parts) >= 2 and parts[0] == "refs" and not _BAD_NAME.search(name) and name != "@"
            and not name.endswith(".")
            and all(part and not part.startswith(".") and not part.endswith(".lock") for part in parts))


def _malformed(number: int, line: str, why: str) -> ValueError:
    return ValueError(f"ls-remote line {number}: {why}: {shown(line, _LINE)}")
