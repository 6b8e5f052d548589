"""Docker/OCI image references: parse, normalise and print them.

The grammar and the normalisation are those of github.com/distribution/reference
(regexp.go, normalize.go, reference.go), so a string means here what it means
to `docker pull`:

    reference  := name [":" tag] ["@" digest]
    name       := [host [":" port] "/"] path
    path       := component ("/" component)*
    component  := [a-z0-9]+ (([._] | "__" | "-"+) [a-z0-9]+)*
    tag        := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
    digest     := algorithm ":" hex

Every error quotes the input and names the first thing wrong with it;
positions are 1-based character offsets into the quoted input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import NoReturn

from pinguard.errors import InvalidReference

__all__ = ["DOCKER_HUB", "Reference", "is_digest", "parse", "validate_digest"]

DOCKER_HUB = "docker.io"
_LEGACY_HUB = "index.docker.io"
_OFFICIAL = "library/"
_LOCALHOST = "localhost"
_MAX_NAME = 255
_MAX_TAG = 128
_MIN_HEX = 32
# Algorithms with a fixed digest size; others only need 32+ hex digits.
_HEX_DIGITS = {"sha256": 64, "sha384": 96, "sha512": 128}
_SEPARATORS = "._-"

# Everything outside this set is wrong wherever it appears, so it is reported
# before the structure is examined.
_OUTSIDE_ALPHABET = re.compile(r"[^A-Za-z0-9._\-/:@\[\]+]")
_WHITESPACE = re.compile(r"\s")
_UPPER = re.compile(r"[A-Z]")
# A bare 64-digit hex string is an image ID; docker refuses it as a name.
_IMAGE_ID = re.compile(r"[a-f0-9]{64}")
_PATH = re.compile(
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
)
_VALID_SEPARATOR = re.compile(r"[._]|__|-+")
_NOT_LABEL = re.compile(r"[^A-Za-z0-9-]")
_NOT_IPV6 = re.compile(r"[^A-Fa-f0-9:]")
_NOT_DIGIT = re.compile(r"[^0-9]")
_NOT_TAG = re.compile(r"[^A-Za-z0-9_.-]")
_ALGORITHM = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*")
_NOT_HEX = re.compile(r"[^0-9a-fA-F]")
_NOT_LOWER_HEX = re.compile(r"[^0-9a-f]")


@dataclass(frozen=True, slots=True)
class Reference:
    """A normalised image reference.

    Construction checks that the fields are exactly what `parse` makes of
    `str(self)`, so every instance is valid and `parse(str(ref)) == ref`.
    """

    registry: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    def __post_init__(self) -> None:
        text = str(self)
        given = (self.registry, self.repository, self.tag, self.digest)
        read = _split(text)
        if read != given:
            fields = ("registry", "repository", "tag", "digest")
            drift = "; ".join(
                f"{field} {_show(want)} reads back as {_show(got)}"
                for field, want, got in zip(fields, given, read, strict=True)
                if want != got
            )
            _fail(text, drift)

    @property
    def name(self) -> str:
        """The normalised name, e.g. "docker.io/library/nginx"."""
        return f"{self.registry}/{self.repository}"

    @property
    def familiar_name(self) -> str:
        """Docker's short form: "nginx", "user/app", "public.ecr.aws/x/y"."""
        if self.registry != DOCKER_HUB:
            return self.name
        short = self.repository.removeprefix(_OFFICIAL)
        if short != self.repository and "/" not in short and not _IMAGE_ID.fullmatch(short):
            return short
        # Docker would print "docker.io/localhost/app" as "localhost/app", which
        # reads back as another registry; keep the host so the short form round-trips.
        if _names_registry(self.repository.partition("/")[0]):
            return self.name
        return self.repository

    def familiar(self) -> str:
        """The familiar name with ":tag" and "@digest" as present."""
        return self.familiar_name + self._suffix()

    def __str__(self) -> str:
        return self.name + self._suffix()

    def with_digest(self, digest: str | None) -> Reference:
        """A copy pinned to `digest` (or unpinned for None); the tag is kept."""
        return replace(self, digest=digest)

    def with_tag(self, tag: str | None) -> Reference:
        """A copy with `tag` (or no tag for None); the digest is kept."""
        return replace(self, tag=tag)

    def _suffix(self) -> str:
        tag = "" if self.tag is None else ":" + self.tag
        digest = "" if self.digest is None else "@" + self.digest
        return tag + digest


def parse(text: str) -> Reference:
    """Parse and normalise `text` the way docker's ParseNormalizedNamed does.

    "nginx" becomes docker.io/library/nginx, "index.docker.io" becomes
    docker.io, and a tag and a digest may both be present.  Surrounding
    whitespace is an error, not something to strip.
    """
    reference = object.__new__(Reference)  # _split has checked it all: skip the re-check construction does
    for name, value in zip(("registry", "repository", "tag", "digest"), _split(text), strict=True):
        object.__setattr__(reference, name, value)
    return reference


def is_digest(text: str) -> bool:
    """Whether `text` is a valid "algorithm:hex" digest."""
    return _digest_problem(text, 0, len(text)) is None


def is_tag(text: str) -> bool:
    """Whether `text` is a valid tag."""
    return _tag_problem(text, 0, len(text)) is None


def validate_digest(text: str) -> str:
    """Return `text` if it is a valid digest, else raise InvalidReference."""
    problem = _digest_problem(text, 0, len(text))
    if problem is not None:
        raise InvalidReference(problem)
    return text


def _split(text: str) -> tuple[str, str, str | None, str | None]:
    """Check `text`; return its normalised (registry, repository, tag, digest)."""
    if not text:
        _fail(text, "empty reference")
    bad = _OUTSIDE_ALPHABET.search(text)
    if bad:
        space = _WHITESPACE.search(text)
        if space:
            _fail(text, f"has whitespace at position {space.start() + 1}")
        _fail(text, f"invalid reference format: {_unexpected(text, bad.start())}")
    if _IMAGE_ID.fullmatch(text):
        _fail(text, "a 64-digit hex string is an image ID, not a repository name")

    # Neither name nor tag may hold "@", and the tag is the part after a ":"
    # that follows the last "/", so a registry port is never taken for a tag.
    at = text.find("@")
    end = len(text) if at < 0 else at
    colon = text.find(":", text.rfind("/", 0, end) + 1, end)
    name_end = end if colon < 0 else colon
    if name_end == 0:
        _fail(text, f"missing repository name before {_quote(text[0])}")

    slash = text.find("/", 0, name_end)
    if slash >= 0 and _names_registry(text[:slash]):
        registry, path_start = text[:slash], slash + 1
        problem = _host_problem(text, 0, slash)
        if problem is not None:
            _fail(text, f"invalid registry host {_quote(registry)}: {problem}")
    else:
        registry, path_start = DOCKER_HUB, 0
    problem = _path_problem(text, path_start, name_end)
    if problem is not None:
        _fail(text, problem)

    path = text[path_start:name_end]
    if registry == _LEGACY_HUB:
        registry = DOCKER_HUB
    if registry == DOCKER_HUB and "/" not in path:
        path = _OFFICIAL + path
    # Measured after normalisation, as docker does: the limit is on what the
    # registry sees, and a measure that normalisation changes would accept
    # `parse(x)` yet reject `parse(str(parse(x)))`.
    name = f"{registry}/{path}"
    if len(name) > _MAX_NAME:
        count = f"{len(name)}"
        if name != text[:name_end]:
            count += f" as {_quote(name)}"
        _fail(text, f"name is longer than {_MAX_NAME} characters ({count})")

    tag = None
    if colon >= 0:
        problem = _tag_problem(text, colon + 1, end)
        if problem is not None:
            _fail(text, problem)
        tag = text[colon + 1 : end]
    digest = None
    if at >= 0:
        problem = _digest_problem(text, at + 1, len(text))
        if problem is not None:
            _fail(text, problem)
        digest = text[at + 1 :]
    return registry, path, tag, digest


def _names_registry(first: str) -> bool:
    """Docker's rule for whether the part before the first "/" is a registry host."""
    return "." in first or ":" in first or first == _LOCALHOST or first.lower() != first


def _host_problem(text: str, start: int, end: int) -> str | None:
    """Why text[start:end] is not host[:port], or None when it is one."""
    if text[start] == "[":
        close = text.find("]", start, end)
        if close < 0:
            return f'"[" at position {start + 1} is not closed'
        if close == start + 1:
            return f"empty IPv6 address at position {start + 1}"
        bad = _NOT_IPV6.search(text, start + 1, close)
        if bad:
            return _unexpected(text, bad.start())
        port = close + 1
    else:
        port = text.find(":", start, end)
        if port < 0:
            port = end
        if port == start:
            return f'no host name before ":" at position {start + 1}'
        label = start
        while True:
            dot = text.find(".", label, port)
            label_end = port if dot < 0 else dot
            problem = _label_problem(text, label, label_end, port)
            if problem is not None:
                return problem
            if dot < 0:
                break
            label = dot + 1
    if port == end:
        return None
    if text[port] != ":":
        return _unexpected(text, port)
    if port + 1 == end:
        return f'empty port after ":" at position {port + 1}'
    bad = _NOT_DIGIT.search(text, port + 1, end)
    return None if bad is None else _unexpected(text, bad.start())


def _label_problem(text: str, start: int, end: int, domain_end: int) -> str | None:
    """Why text[start:end], one dot-separated part of a domain, is invalid."""
    if start == end:
        if end < domain_end:
            return f'"." at position {end + 1} has no domain component before it'
        return f'"." at position {start} has no domain component after it'
    bad = _NOT_LABEL.search(text, start, end)
    if bad:
        return _unexpected(text, bad.start())
    for at, edge in ((start, "starts"), (end - 1, "ends")):
        if text[at] == "-":
            return f'domain component {_quote(text[start:end])} at position {start + 1} {edge} with "-"'
    return None


def _path_problem(text: str, start: int, end: int) -> str | None:
    """Why text[start:end] is not a repository path, or None when it is one."""
    upper = _UPPER.search(text, start, end)
    if upper:
        return (
            "repository name must be lowercase: "
            f"{_quote(upper.group())} at position {upper.start() + 1}"
        )
    if start == end:
        return f'no path component after "/" at position {start}'
    match = _PATH.match(text, start, end)
    stop = start if match is None else match.end()
    if stop == end:
        return None
    # The grammar cannot continue at `stop`; say why from what is there.
    if text[stop] == "/":
        if stop == 0:
            return 'name starts with "/"'
        if stop == start:  # right after the registry's "/"
            return f'"//" at position {stop}'
        if stop + 1 == end:
            return f'no path component after "/" at position {stop + 1}'
        if text[stop + 1] == "/":
            return f'"//" at position {stop + 1}'
        stop += 1
    if text[stop] in _SEPARATORS:
        if stop == start or text[stop - 1] == "/":
            return (
                "path component must start with a letter or digit, not "
                f"{_quote(text[stop])} at position {stop + 1}"
            )
        run_end = stop
        while run_end < end and text[run_end] in _SEPARATORS:
            run_end += 1
        run = text[stop:run_end]
        if not _VALID_SEPARATOR.fullmatch(run):
            return (
                f"invalid separator {_quote(run)} at position {stop + 1}: "
                'use ".", "_", "__" or dashes'
            )
        if run_end == end or text[run_end] == "/":
            return (
                "path component must end with a letter or digit, not "
                f"{_quote(run[-1])} at position {run_end}"
            )
        stop = run_end
    return f"invalid reference format: {_unexpected(text, stop)}"


def _tag_problem(text: str, start: int, end: int) -> str | None:
    """Why text[start:end] is not a tag, or None when it is one."""
    if start == end:
        return "empty tag"
    bad = _NOT_TAG.search(text, start, end)
    if bad:
        return f"invalid tag {_quote(text[start:end])}: {_unexpected(text, bad.start())}"
    if text[start] in ".-":
        return (
            f'invalid tag {_quote(text[start:end])}: must start with a letter, digit or "_", '
            f"not {_quote(text[start])} at position {start + 1}"
        )
    if end - start > _MAX_TAG:
        return f"tag {_quote(text[start:end])} is longer than {_MAX_TAG} characters ({end - start})"
    return None


def _digest_problem(text: str, start: int, end: int) -> str | None:
    """Why text[start:end] is not a digest, or None when it is one."""
    if start == end:
        return "empty digest"
    colon = text.find(":", start, end)
    if colon < 0:
        why = 'no ":" between algorithm and hex digits'
    elif colon == start:
        why = 'no algorithm before ":"'
    elif not _ALGORITHM.fullmatch(text, start, colon):
        why = f"invalid algorithm {_quote(text[start:colon])}"
    else:
        algorithm = text[start:colon]
        size = _HEX_DIGITS.get(algorithm)
        count = end - colon - 1
        if size is None:
            rule = f"{algorithm} needs at least {_MIN_HEX} hex digits"
            bad = _NOT_HEX.search(text, colon + 1, end)
            wrong_count = count < _MIN_HEX
        else:
            rule = f"{algorithm} needs {size} lowercase hex digits"
            bad = _NOT_LOWER_HEX.search(text, colon + 1, end)
            wrong_count = count != size
        if bad:
            why = f"{rule}; {_quote(bad.group())} at position {bad.start() + 1} is not one"
        elif wrong_count:
            why = f"{rule}, got {count}"
        else:
            return None
    return f"invalid digest {_quote(text[start:end])}: {why}"


def _unexpected(text: str, index: int) -> str:
    return f"unexpected {_quote(text[index])} at position {index + 1}"


def _quote(text: str) -> str:
    """Double-quote `text`, escaping what would not print or would end the quote."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return '"' + "".join(out) + '"'


def _show(value: str | None) -> str:
    return "none" if value is None else _quote(value)


def _fail(text: str, reason: str) -> NoReturn:
    raise InvalidReference(f"invalid reference {_quote(text)}: {reason}")


def locked_key(reference: Reference) -> tuple[str, str] | None:
    """The (name, tag) of the lock entry a reference stands for: its tag, `latest` when it has neither tag nor
    digest; None for a digest alone."""
    if reference.tag is not None:
        return (reference.name, reference.tag)
    return None if reference.digest is not None else (reference.name, "latest")
