"""runtime-env-pins: Ray `runtime_env` pip and uv packages are pinned to one version.

Ray installs `runtime_env` packages when the job starts, after the image was
pulled: whatever the index serves that day, outside the image lock. A pin keeps
the job reproducible; a range or a bare name does not.

Pinned: `name==version` (extras and environment markers allowed:
`ray[train]==2.40.0; python_version >= "3.10"`), or a URL that carries its hash
(`pkg @ https://host/pkg.whl#sha256=...`) or a VCS URL at a full commit
(`git+https://github.com/org/repo@<40 hex digits>`). Comments and options such
as `--index-url` are no packages and pass. `-r FILE` (and `pip: FILE`, a
requirements file) is reported: its contents cannot be checked here; so is
`-e`, an editable install.

Checked: `pip` and `uv` (a list, or `{packages: ...}`) of every `runtime_env`
mapping of a document, of a RayJob's `runtimeEnvYAML` string and of the
`runtime_env`s in a RayService's `serveConfigV2` string, and of runtime_env files
(`runtime_env.yaml`, for `ray job submit --runtime-env`). `conda` is not checked.
One finding per requirement, at the requirement.

PASS: `runtimeEnvYAML: {pip: ["torch==2.4.1", "datasets[s3]==3.0.1"]}` (as YAML)
FAIL: `runtimeEnvYAML: {pip: ["torch", "datasets>=3"]}`, `pip: requirements.txt`
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Final

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf
from pinguard.sources import runtime_env
from pinguard.sources.base import SourceError
from pinguard.sources.yamlnodes import Located, compose, embedded, mapping_get, same_position, scalar_text, walk_pairs

ID = "runtime-env-pins"
TYPE: Final = "document"
CONF: dict[str, object] = {}
DEFAULT: dict[str, object] = {"level": "off"}

_INSTALLERS = ("pip", "uv")
_RUNTIME_ENV_YAML = "runtimeEnvYAML"  # the string is one runtime_env
_SERVE_CONFIG = "serveConfigV2"  # the string holds runtime_envs, per application and deployment
_WHY = "runtime_env packages are installed when the job starts, outside the image lock"

_COMMENT = re.compile(r"(?:^|\s)#")  # pip's rule: `#` starts a comment at a line start or after a space
_FILE_OPTION = re.compile(r"(-r|--requirement|-e|--editable)(?:\s*=?\s*)\S")
_OPTIONS = re.compile(r"\s--?[A-Za-z]")  # per-requirement options: `--hash=...`, `--config-settings ...`
_NAME = re.compile(r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\s*(?:\[[^\]]*\])?)\s*(?P<rest>.*)", re.S)
_SPEC_STARTS = ("", "(", "<", ">", "=", "!", "~", ";")  # after the name: a version or markers, else a URL or path
_EXACT = re.compile(r"\s*(?:===\s*\S+|==\s*[^\s*,]+)\s*")  # `==1.2`, not `==1.*`
_HASHED = re.compile(r"[#&](?:sha256|sha384|sha512)=[0-9a-fA-F]+")
_COMMIT = re.compile(r"@[0-9a-f]{40}(?:[0-9a-f]{24})?(?=[#\s]|$)")


def check(conf: Conf, document: Node, where: Located) -> Iterator[Problem]:
    if where.source == runtime_env.SOURCE:  # a runtime_env file (`ray job submit --runtime-env FILE`) is one
        yield from _runtime_env(document, where, same_position)
        return
    for _, key, value in walk_pairs(document):
        if key.value == "runtime_env":
            yield from _runtime_env(value, where, same_position)
        elif key.value in (_RUNTIME_ENV_YAML, _SERVE_CONFIG) and isinstance(value, ScalarNode):
            for inner, to_file in _embedded_documents(value, where):
                envs = [inner] if key.value == _RUNTIME_ENV_YAML else [
                    env for _, inner_key, env in walk_pairs(inner) if inner_key.value == "runtime_env"]
                for env in envs:
                    yield from _runtime_env(env, where, to_file)


def _embedded_documents(node: ScalarNode, where: Located) -> list[tuple[Node, Callable[[int], int]]]:
    """The YAML documents in a string, each with its map to file positions.

    A string that cannot be mapped (folded, escaped) is still read; its problems are reported at its start.
    """
    located = embedded(node, where)
    if located is None:
        start = node.start_mark.index
        located = str(node.value), lambda _: start
    text, to_file = located
    try:
        return [(document, to_file) for document in compose(text)]
    except SourceError:  # KubeRay refuses it too, and says why
        return []


def _runtime_env(env: Node, where: Located, to_file: Callable[[int], int]) -> Iterator[Problem]:
    if not isinstance(env, MappingNode):
        return
    for installer in _INSTALLERS:
        packages = mapping_get(env, installer)
        if isinstance(packages, MappingNode):
            packages = mapping_get(packages, "packages")
        file = scalar_text(packages)
        if file is not None and packages is not None:
            yield _at(packages, where, to_file, f"{installer} installs the requirements file `{file}`, which cannot "
                                                "be checked here: list its requirements, pinned, instead")
        for item in packages.value if isinstance(packages, SequenceNode) else []:
            text = scalar_text(item)
            why = _unpinned(text) if text is not None else None
            if why is not None:
                yield _at(item, where, to_file, f"{why}; {_WHY}")


def _unpinned(line: str) -> str | None:
    """Why one requirement line does not name one artefact; None when it does, or names no package."""
    line = _COMMENT.split(line, maxsplit=1)[0].strip()
    option = _FILE_OPTION.match(line)
    if option is not None:
        if option.group(1) in ("-r", "--requirement"):
            return f"`{line}` names a requirements file, which cannot be checked here: list its requirements, pinned"
        return f"`{line}` is an editable install, which nothing pins: name a version instead"
    if not line or line.startswith("-"):  # an option such as `--index-url`: no package
        return None
    requirement = _OPTIONS.split(line, maxsplit=1)[0]
    named = _NAME.fullmatch(requirement)
    if named is None or named.group("rest")[:1] not in _SPEC_STARTS:  # a URL or a path, maybe `name @ URL`
        location = requirement.split(" ;")[0]
        if _HASHED.search(location) or _COMMIT.search(location):
            return None
        return (f"`{requirement}` is not pinned: write `name==VERSION`, or a URL ending in `#sha256=DIGEST` "
                "(VCS: `@COMMIT`)")
    spec = named.group("rest").split(";")[0].strip().removeprefix("(").removesuffix(")")
    if any(_EXACT.fullmatch(clause) for clause in spec.split(",")):
        return None
    pin = f"{named.group('name').replace(' ', '')}==VERSION"
    return f"`{requirement}` is not pinned{' to one version' if spec else ''}: write `{pin}`"


def _at(node: Node, where: Located, to_file: Callable[[int], int], message: str) -> Problem:
    """A problem at a scalar's first character, quotes excluded."""
    start = to_file(node.start_mark.index + (1 if isinstance(node, ScalarNode) and node.style in ("'", '"') else 0))
    span = where.span(start, start)
    return Problem(where.path, span.line, span.column, message)
