"""Image references: a truth table of docker's grammar, plus properties.

The properties check `parse` against an oracle transcribed from
distribution/reference (regexp.go and normalize.go): a second, independent
reading of the same spec.
"""

# One case per line reads as a truth table; wrapping the rows would hide that.
# ruff: noqa: E501
from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pinguard.errors import InvalidReference
from pinguard.reference import Reference, is_digest, parse, validate_digest

HEX64 = "0123456789abcdef" * 4
D256 = "sha256:" + HEX64
D384 = "sha384:" + HEX64 + HEX64[:32]
D512 = "sha512:" + HEX64 * 2
DX = "blake3:" + "ABCDEF0123456789" * 2  # unregistered algorithm: 32+ hex digits of either case
T128 = "t" * 128
LONG = "a" * 243  # "example.com/" + LONG is exactly 255 characters

# fmt: off
VALID = [
    # input                                                  registry                repository                       tag                   digest  str                                                             familiar
    ("nginx",                                                 "docker.io",            "library/nginx",                 None,                 None,   "docker.io/library/nginx",                                      "nginx"),
    ("nginx:1.25",                                            "docker.io",            "library/nginx",                 "1.25",               None,   "docker.io/library/nginx:1.25",                                 "nginx:1.25"),
    ("library/nginx",                                         "docker.io",            "library/nginx",                 None,                 None,   "docker.io/library/nginx",                                      "nginx"),
    ("docker.io/nginx",                                       "docker.io",            "library/nginx",                 None,                 None,   "docker.io/library/nginx",                                      "nginx"),
    ("docker.io/library/nginx",                               "docker.io",            "library/nginx",                 None,                 None,   "docker.io/library/nginx",                                      "nginx"),
    ("index.docker.io/library/nginx",                         "docker.io",            "library/nginx",                 None,                 None,   "docker.io/library/nginx",                                      "nginx"),
    ("index.docker.io/nginx",                                 "docker.io",            "library/nginx",                 None,                 None,   "docker.io/library/nginx",                                      "nginx"),
    ("user/app:tag",                                          "docker.io",            "user/app",                      "tag",                None,   "docker.io/user/app:tag",                                       "user/app:tag"),
    ("docker.io/library/a/b",                                 "docker.io",            "library/a/b",                   None,                 None,   "docker.io/library/a/b",                                        "library/a/b"),
    ("localhost/app",                                         "localhost",            "app",                           None,                 None,   "localhost/app",                                                "localhost/app"),
    ("localhost:5000/app:1",                                  "localhost:5000",       "app",                           "1",                  None,   "localhost:5000/app:1",                                         "localhost:5000/app:1"),
    ("127.0.0.1:5000/a/b/c:t",                                "127.0.0.1:5000",       "a/b/c",                         "t",                  None,   "127.0.0.1:5000/a/b/c:t",                                       "127.0.0.1:5000/a/b/c:t"),
    ("[::1]:5000/app",                                        "[::1]:5000",           "app",                           None,                 None,   "[::1]:5000/app",                                               "[::1]:5000/app"),
    ("[fc00:1:2:3:4:5:6:7]/library/debian",                   "[fc00:1:2:3:4:5:6:7]", "library/debian",                None,                 None,   "[fc00:1:2:3:4:5:6:7]/library/debian",                          "[fc00:1:2:3:4:5:6:7]/library/debian"),
    ("Registry.Example.com/app",                              "Registry.Example.com", "app",                           None,                 None,   "Registry.Example.com/app",                                     "Registry.Example.com/app"),
    ("Foo/bar",                                               "Foo",                  "bar",                           None,                 None,   "Foo/bar",                                                      "Foo/bar"),  # uppercase first part names a registry
    ("public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1", "public.ecr.aws", "deep-learning-containers/ray", "train-ml-cuda-v1.1", None, "public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1", "public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1"),
    (f"nginx:1.25@{D256}",                                    "docker.io",            "library/nginx",                 "1.25",               D256,   f"docker.io/library/nginx:1.25@{D256}",                         f"nginx:1.25@{D256}"),
    (f"nginx@{D256}",                                         "docker.io",            "library/nginx",                 None,                 D256,   f"docker.io/library/nginx@{D256}",                              f"nginx@{D256}"),
    (f"ghcr.io/org/app@{D512}",                               "ghcr.io",              "org/app",                       None,                 D512,   f"ghcr.io/org/app@{D512}",                                      f"ghcr.io/org/app@{D512}"),
    (f"ghcr.io/org/app@{D384}",                               "ghcr.io",              "org/app",                       None,                 D384,   f"ghcr.io/org/app@{D384}",                                      f"ghcr.io/org/app@{D384}"),
    (f"app@{DX}",                                             "docker.io",            "library/app",                   None,                 DX,     f"docker.io/library/app@{DX}",                                  f"app@{DX}"),
    ("a__b",                                                  "docker.io",            "library/a__b",                  None,                 None,   "docker.io/library/a__b",                                       "a__b"),
    ("a--b",                                                  "docker.io",            "library/a--b",                  None,                 None,   "docker.io/library/a--b",                                       "a--b"),
    ("a.b_c",                                                 "docker.io",            "library/a.b_c",                 None,                 None,   "docker.io/library/a.b_c",                                      "a.b_c"),
    ("localhost:5000",                                        "docker.io",            "library/localhost",             "5000",               None,   "docker.io/library/localhost:5000",                             "localhost:5000"),  # no "/": a name and a tag
    ("192.168.0.1",                                           "docker.io",            "library/192.168.0.1",           None,                 None,   "docker.io/library/192.168.0.1",                                "192.168.0.1"),
    ("docker.io/localhost/app",                               "docker.io",            "localhost/app",                 None,                 None,   "docker.io/localhost/app",                                      "docker.io/localhost/app"),  # "localhost/app" would name another registry
    (f"docker.io/{HEX64}",                                    "docker.io",            f"library/{HEX64}",              None,                 None,   f"docker.io/library/{HEX64}",                                   f"library/{HEX64}"),  # bare hex would be an image ID
    ("nginx:_",                                               "docker.io",            "library/nginx",                 "_",                  None,   "docker.io/library/nginx:_",                                    "nginx:_"),
    (f"nginx:{T128}",                                         "docker.io",            "library/nginx",                 T128,                 None,   f"docker.io/library/nginx:{T128}",                              f"nginx:{T128}"),
    (f"example.com/{LONG}",                                   "example.com",          LONG,                            None,                 None,   f"example.com/{LONG}",                                          f"example.com/{LONG}"),
]
# fmt: on

# fmt: off
INVALID = [
    # input                                  message contains
    ("",                                     "empty reference"),
    (" nginx",                               "has whitespace at position 1"),
    ("nginx ",                               "has whitespace at position 6"),
    ("nginx:1.25\n",                         "has whitespace at position 11"),
    ("${IMAGE}",                             'invalid reference format: unexpected "$" at position 1'),
    ("{{ .Values.image }}",                  "has whitespace at position 3"),
    ("{{.Values.image}}",                    'invalid reference format: unexpected "{" at position 1'),
    ("*",                                    'invalid reference format: unexpected "*" at position 1'),
    ("nginx:lat*st",                         'unexpected "*" at position 10'),
    ("h\u00e9llo",                           'unexpected "\u00e9" at position 2'),
    ("a._b",                                 'invalid separator "._" at position 2'),
    ("a___b",                                'invalid separator "___" at position 2'),
    ("a-.b",                                 'invalid separator "-." at position 2'),
    ("-nginx",                               'path component must start with a letter or digit, not "-" at position 1'),
    ("user/_app",                            'path component must start with a letter or digit, not "_" at position 6'),
    ("nginx-",                               'path component must end with a letter or digit, not "-" at position 6'),
    ("a-/b",                                 'path component must end with a letter or digit, not "-" at position 2'),
    ("a/b+c",                                'invalid reference format: unexpected "+" at position 4'),
    ("foo/Bar",                              'repository name must be lowercase: "B" at position 5'),
    ("Nginx",                                'repository name must be lowercase: "N" at position 1'),
    ("docker.io/library/Nginx",              "repository name must be lowercase"),
    ("nginx:",                               "empty tag"),
    (f"nginx:{T128}t",                       f'tag "{T128}t" is longer than 128 characters (129)'),
    ("nginx:-x",                             'invalid tag "-x": must start with a letter, digit or "_", not "-" at position 7'),
    ("nginx:1:2",                            'invalid tag "1:2": unexpected ":" at position 8'),
    ("nginx@sha256:abc",                     'invalid digest "sha256:abc": sha256 needs 64 lowercase hex digits, got 3'),
    ("nginx@sha256:" + HEX64.upper(),        'sha256 needs 64 lowercase hex digits; "A" at position 24 is not one'),
    (f"nginx@sha512:{HEX64}",                "sha512 needs 128 lowercase hex digits, got 64"),
    (f"nginx@sha384:{HEX64}",                "sha384 needs 96 lowercase hex digits, got 64"),
    ("nginx@md5:abc",                        "md5 needs at least 32 hex digits, got 3"),
    ("nginx@sha256",                         'no ":" between algorithm and hex digits'),
    (f"nginx@:{HEX64}",                      'no algorithm before ":"'),
    (f"nginx@1sha:{HEX64}",                  'invalid algorithm "1sha"'),
    ("nginx@",                               "empty digest"),
    (f"nginx@{D256}@{D256}",                 '"@" at position 78 is not one'),
    (f"example.com/{LONG}a",                 "name is longer than 255 characters (256)"),
    ("a" * 240,                              'name is longer than 255 characters (258 as "docker.io/library/aaa'),  # measured after normalisation, as docker does
    ("nginx/",                               'no path component after "/" at position 6'),
    ("localhost/",                           'no path component after "/" at position 10'),
    ("//",                                   'name starts with "/"'),
    ("/nginx",                               'name starts with "/"'),
    ("a//b",                                 '"//" at position 2'),
    ("localhost//app",                       '"//" at position 10'),
    (":tag",                                 'missing repository name before ":"'),
    (f"@{D256}",                             'missing repository name before "@"'),
    ("localhost:/app",                       'invalid registry host "localhost:": empty port after ":" at position 10'),
    ("localhost:5a/app",                     'invalid registry host "localhost:5a": unexpected "a" at position 12'),
    ("https://example.com/app",              'invalid registry host "https:": empty port after ":" at position 6'),
    (":5000/app",                            'no host name before ":" at position 1'),
    ("a..com/app",                           '"." at position 3 has no domain component before it'),
    ("a./app",                               '"." at position 2 has no domain component after it'),
    ("-a.com/app",                           'domain component "-a" at position 1 starts with "-"'),
    ("a-.com/app",                           'domain component "a-" at position 1 ends with "-"'),
    ("a_b.com/app",                          'invalid registry host "a_b.com": unexpected "_" at position 2'),  # docker keeps it, with no registry at all
    ("[::1/app",                             '"[" at position 1 is not closed'),
    ("[]:5000/app",                          "empty IPv6 address at position 1"),
    ("[::g]/app",                            'unexpected "g" at position 4'),
    ("[::1]5000/app",                        'unexpected "5" at position 6'),
    ("[::1]:5000",                           'invalid reference format: unexpected "[" at position 1'),  # no "/": not a registry
    (HEX64,                                  "a 64-digit hex string is an image ID, not a repository name"),
]
# fmt: on

# fmt: off
EXACT = [
    ("nginx:",           'invalid reference "nginx:": empty tag'),
    ("foo/Bar",          'invalid reference "foo/Bar": repository name must be lowercase: "B" at position 5'),
    ("nginx@sha256:abc", 'invalid reference "nginx@sha256:abc": invalid digest "sha256:abc": sha256 needs 64 lowercase hex digits, got 3'),
    ("",                 'invalid reference "": empty reference'),
    ("a\tb",             'invalid reference "a\\tb": has whitespace at position 2'),
    ('a"b',              'invalid reference "a\\"b": invalid reference format: unexpected "\\"" at position 2'),
]
# fmt: on


@pytest.mark.parametrize(("text", "registry", "repository", "tag", "digest", "full", "familiar"), VALID)
def test_valid(
    text: str, registry: str, repository: str, tag: str | None, digest: str | None, full: str, familiar: str
) -> None:
    ref = parse(text)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (registry, repository, tag, digest)
    assert (str(ref), ref.familiar()) == (full, familiar)
    assert ref.name == f"{registry}/{repository}"
    assert familiar.startswith(ref.familiar_name)


@pytest.mark.parametrize(("text", "message"), INVALID)
def test_invalid(text: str, message: str) -> None:
    with pytest.raises(InvalidReference) as caught:
        parse(text)
    assert str(caught.value).startswith('invalid reference "')
    assert message in str(caught.value)


@pytest.mark.parametrize(("text", "message"), EXACT)
def test_message_in_full(text: str, message: str) -> None:
    with pytest.raises(InvalidReference) as caught:
        parse(text)
    assert str(caught.value) == message


# fmt: off
DIGESTS = [
    # text                        valid   message contains
    (D256,                        True,   None),
    (D384,                        True,   None),
    (D512,                        True,   None),
    (DX,                          True,   None),
    ("sha256+b64u:" + HEX64[:32], True,   None),
    ("SHA256:" + HEX64.upper(),   True,   None),  # algorithm names are case-sensitive: not the registered sha256
    ("",                          False,  "empty digest"),
    ("sha256",                    False,  'invalid digest "sha256": no ":" between algorithm and hex digits'),
    ("sha256:abc",                False,  'invalid digest "sha256:abc": sha256 needs 64 lowercase hex digits, got 3'),
    ("sha256:" + HEX64[:-1] + "g", False, 'sha256 needs 64 lowercase hex digits; "g" at position 71 is not one'),
    (f"sha512:{HEX64}",           False,  "sha512 needs 128 lowercase hex digits, got 64"),
    (f"sha-:{HEX64}",             False,  'invalid algorithm "sha-"'),
    (f"blake3:{HEX64[:31]}",      False,  "blake3 needs at least 32 hex digits, got 31"),
]
# fmt: on


@pytest.mark.parametrize(("text", "valid", "message"), DIGESTS)
def test_digest(text: str, valid: bool, message: str | None) -> None:
    assert is_digest(text) is valid
    if message is None:
        assert validate_digest(text) == text
    else:
        with pytest.raises(InvalidReference, match=re.escape(message)):
            validate_digest(text)


# fmt: off
CONSTRUCTED = [
    # registry           repository          tag     digest        message contains
    ("docker.io",        "library/nginx",    None,   None,         None),
    ("docker.io",        "nginx",            None,   None,         'repository "nginx" reads back as "library/nginx"'),
    ("index.docker.io",  "library/nginx",    None,   None,         'registry "index.docker.io" reads back as "docker.io"'),
    ("foo",              "bar",              None,   None,         'registry "foo" reads back as "docker.io"; repository "bar" reads back as "foo/bar"'),
    ("docker.io",        "library/nginx:1",  None,   None,         'repository "library/nginx:1" reads back as "library/nginx"; tag none reads back as "1"'),
    ("docker.io",        "library/nginx",    "",     None,         "empty tag"),
    ("docker.io",        "library/nginx",    None,   "sha256:abc", "sha256 needs 64 lowercase hex digits"),
    ("example.com",      "Bad",              None,   None,         "repository name must be lowercase"),
]
# fmt: on


@pytest.mark.parametrize(("registry", "repository", "tag", "digest", "message"), CONSTRUCTED)
def test_construction_accepts_only_normalised_fields(
    registry: str, repository: str, tag: str | None, digest: str | None, message: str | None
) -> None:
    if message is None:
        assert Reference(registry, repository, tag, digest) == parse(f"{registry}/{repository}")
    else:
        with pytest.raises(InvalidReference, match=re.escape(message)):
            Reference(registry, repository, tag, digest)


def test_with_tag_and_with_digest() -> None:
    ref = parse("nginx:1.25")
    pinned = ref.with_digest(D256)
    assert str(pinned) == f"docker.io/library/nginx:1.25@{D256}"
    assert str(pinned.with_tag(None)) == f"docker.io/library/nginx@{D256}"
    assert pinned.with_digest(None) == ref
    assert str(ref.with_tag("2.0")) == "docker.io/library/nginx:2.0"
    with pytest.raises(InvalidReference, match=re.escape('invalid tag "-bad"')):
        ref.with_tag("-bad")
    with pytest.raises(InvalidReference, match=re.escape("sha256 needs 64 lowercase hex digits")):
        ref.with_digest("sha256:abc")


# The oracle: distribution/reference's patterns, transcribed (Go's \w is ASCII).
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_PATH = rf"{_COMPONENT}(?:/{_COMPONENT})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE = re.compile(rf"((?:{_HOST}/)?{_PATH})(?::({_TAG}))?(?:@({_DIGEST}))?")
_NAME = re.compile(rf"({_HOST})/({_PATH})")
_REGISTERED = {"sha256": 64, "sha384": 96, "sha512": 128}  # go-digest's fixed sizes


def docker_parse(text: str) -> tuple[str, str, str | None, str | None] | None:
    """What ParseNormalizedNamed makes of `text`; None where it refuses."""
    if re.fullmatch(r"[a-f0-9]{64}", text):
        return None
    first, slash, rest = text.partition("/")
    if slash and (first == "localhost" or "." in first or ":" in first or first.lower() != first):
        domain, remainder = first, rest
    else:
        domain, remainder = "docker.io", text
    if domain == "index.docker.io":
        domain = "docker.io"
    if domain == "docker.io" and "/" not in remainder:
        remainder = "library/" + remainder
    # docker cuts the remote name at the first ":" only, so its lowercase check
    # also sees "@Sha3" in "app@Sha3:…" yet not in "app:1@Sha3:…"; the check is
    # meant for the repository, and is applied to it alone.
    remote = re.split("[:@]", remainder)[0]
    if remote.lower() != remote:
        return None
    match = _REFERENCE.fullmatch(f"{domain}/{remainder}")
    if match is None:
        return None
    name, tag, digest = match.groups()
    if len(name) > 255:
        return None
    if digest is not None:
        algorithm, _, encoded = digest.partition(":")
        size = _REGISTERED.get(algorithm)
        if size is not None and not re.fullmatch(f"[a-f0-9]{{{size}}}", encoded):
            return None
    parts = _NAME.fullmatch(name)
    if parts is None:
        # e.g. "a_b.com/app": docker takes "a_b.com" for a host, fails to match it
        # as one, and keeps the whole name as a path with no registry at all.
        return None
    return parts[1], parts[2], tag, digest


_label = st.from_regex(r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,4}[a-zA-Z0-9])?", fullmatch=True)
_registry = st.one_of(
    st.sampled_from(["docker.io", "index.docker.io", "localhost", "Registry", "[::1]", "[fc00:1::7]"]),
    st.lists(_label, min_size=2, max_size=3).map(".".join),
)
_port = st.one_of(st.just(""), st.integers(0, 65535).map(lambda port: f":{port}"))
# Without a registry the first component must not look like a host (no "."), or it becomes one.
_first_component = st.from_regex(r"[a-z0-9]{1,4}(?:(?:_|__|-{1,2})[a-z0-9]{1,4}){0,2}", fullmatch=True)
_component = st.from_regex(r"[a-z0-9]{1,4}(?:(?:[._]|__|-{1,2})[a-z0-9]{1,4}){0,2}", fullmatch=True)
_tag = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}", fullmatch=True)
_digest = st.from_regex(r"sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128}|blake3\+x:[0-9a-fA-F]{32,40}", fullmatch=True)


@st.composite
def valid_references(draw: st.DrawFn) -> str:
    registry = draw(st.one_of(st.none(), st.builds(str.__add__, _registry, _port)))
    path = "/".join(
        [draw(_first_component if registry is None else _component), *draw(st.lists(_component, max_size=3))]
    )
    tag = draw(st.one_of(st.none(), _tag))
    digest = draw(st.one_of(st.none(), _digest))
    return (
        ("" if registry is None else registry + "/")
        + path
        + ("" if tag is None else ":" + tag)
        + ("" if digest is None else "@" + digest)
    )


_GRAMMAR_BITS = "a z 0 9 A Z . _ __ - -- / : @ [ ] + :5000 library/ localhost docker.io index.docker.io"
_pieces = st.sampled_from([*_GRAMMAR_BITS.split(), "sha256:", "sha512:", "md5:", HEX64[:32], HEX64])
_near_misses = st.lists(_pieces, max_size=12).map("".join)


@st.composite
def mutated_references(draw: st.DrawFn) -> str:
    """A valid reference with one spot cut and/or spliced: the grammar's edges."""
    text = draw(valid_references())
    at = draw(st.integers(0, len(text)))
    cut = draw(st.integers(0, 2))
    splice: str = draw(st.sampled_from(["", *"aA0._-/:@[]+"]))
    return text[:at] + splice + text[at + cut :]


@settings(max_examples=500)
@given(valid_references())
def test_generated_references_round_trip(text: str) -> None:
    ref = parse(text)
    assert parse(str(ref)) == ref
    assert parse(ref.familiar()) == ref


@settings(max_examples=1000)
@given(st.one_of(valid_references(), mutated_references(), _near_misses))
@example("docker.io/localhost/app")
@example("Foo/bar")
@example("localhost:5000")
def test_parse_agrees_with_docker(text: str) -> None:
    expected = docker_parse(text)
    try:
        ref = parse(text)
    except InvalidReference as err:
        assert expected is None, f"{text!r} rejected ({err}) but docker reads {expected}"
    else:
        assert (ref.registry, ref.repository, ref.tag, ref.digest) == expected


@given(st.text())
def test_any_text_parses_or_raises_invalid_reference(text: str) -> None:
    try:
        parse(text)
    except InvalidReference as err:
        assert str(err).startswith('invalid reference "')
