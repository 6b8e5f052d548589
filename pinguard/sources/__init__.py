"""One module per kind of file; this package knows which kind a file is.

Each module exports `SOURCE` (its name) and `find(path, text) -> Searched`.
Kind detection lives here and only here: by file name first, then, for
generic YAML, by a cheap look at the top-level keys. A YAML file that is a
template rather than YAML (Helm templates, `{{ }}` or `${}` placeholders) is
searched line by line for image keys, and what it holds is reported as not
resolvable where it is templated.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from pinguard.errors import InvalidReference
from pinguard.reference import parse
from pinguard.sources import compose, dockerfile, helm, kubernetes, kustomize, runtime_env, workflow
from pinguard.sources.base import Found, Searched, SourceError
from pinguard.sources.yamlnodes import Located, is_templated

FINDERS: dict[str, Callable[[str, str], Searched]] = {
    module.SOURCE: module.find
    for module in (compose, dockerfile, helm, kubernetes, kustomize, runtime_env, workflow)
}

_YAML_NAME = re.compile(r"\.(ya?ml|json)(-template|\.tmpl|\.tpl|\.j2|\.in)?$", re.IGNORECASE)
_DOCKERFILE_NAME = re.compile(r"(^|[.\-_])(docker|container)file([.\-_]|$)", re.IGNORECASE)
_COMPOSE_NAME = re.compile(r"(^|[.\-_])(docker-)?compose([.\-_][^/]*)?\.ya?ml$", re.IGNORECASE)
_VALUES_NAME = re.compile(r"(^|[.\-_])values([.\-_][^/]*)?\.ya?ml$", re.IGNORECASE)
_KUSTOMIZATION_NAME = re.compile(r"(^|[.\-_])kustomization\.ya?ml$", re.IGNORECASE)
_RUNTIME_ENV_NAME = re.compile(r"(^|[.\-_])runtime[_-]env([.\-_][^/]*)?\.(ya?ml|json)$", re.IGNORECASE)
_TEMPLATE_LINE = re.compile(
    r"""^[ \t]*(?:-[ \t]+)?(?:image|image_uri)[ \t]*:[ \t]*   # the key, maybe as a list item
        (?P<q>["']?)(?P<value>[^"'\#\r\n]*?)(?P=q)             # the value, maybe quoted
        [ \t]*(?:\#.*)?\r?$                                   # a comment""",
    re.MULTILINE | re.VERBOSE,
)


def may_hold_images(name: str) -> bool:
    """Whether a file of this name is worth reading at all."""
    return bool(_YAML_NAME.search(name) or _DOCKERFILE_NAME.search(name))


def detect(path: str, text: str) -> str | None:
    """The source kind of a file, or None for files pinguard does not read."""
    name = PurePosixPath(path).name
    if _DOCKERFILE_NAME.search(name) and not _YAML_NAME.search(name) and not name.endswith(".md"):
        return dockerfile.SOURCE
    if not _YAML_NAME.search(name):
        return None
    if _RUNTIME_ENV_NAME.search(name):
        return runtime_env.SOURCE
    if _KUSTOMIZATION_NAME.search(name):
        return kustomize.SOURCE
    if "/.github/workflows/" in f"/{path}" or name in ("action.yml", "action.yaml"):
        return workflow.SOURCE
    if _COMPOSE_NAME.search(name):
        return compose.SOURCE
    if _VALUES_NAME.search(name):
        return helm.SOURCE
    if _top_level(text, "jobs") and any(_top_level(text, on) for on in ("on", '"on"', "'on'", "true")):
        return workflow.SOURCE
    if not _top_level(text, "apiVersion"):
        if _top_level(text, "services"):
            return compose.SOURCE
        if _top_level(text, "images"):
            return kustomize.SOURCE
    return kubernetes.SOURCE


def _top_level(text: str, key: str) -> bool:
    """Whether a line starts with `key:`; a substring search, far cheaper than a regular expression."""
    return text.startswith(key + ":") or f"\n{key}:" in text


def find(path: str, text: str, kind: str) -> Searched:
    """The references in a file of a known kind; a template that is not YAML is read line by line."""
    try:
        searched = FINDERS[kind](path, text)
    except SourceError:
        if kind == dockerfile.SOURCE or not _looks_templated(text):
            raise
        searched = Searched(_template_lines(path, text, kind))
    # A YAML alias reaches one written value from several places: it is one reference.
    unique: dict[int, Found] = {}
    for item in searched.found:
        unique.setdefault(item.span.start, item)
    return Searched(list(unique.values()), searched.documents)


def _looks_templated(text: str) -> bool:
    return "{{" in text or "{%" in text or "${" in text


def _template_lines(path: str, text: str, kind: str) -> list[Found]:
    """`image:` lines of a file that is a template, not YAML."""
    where = Located(text, path, kind)
    found: list[Found] = []
    for match in _TEMPLATE_LINE.finditer(text):
        value = match.group("value")
        if not value:
            continue
        span = where.span(match.start("value"), match.end("value"))
        if is_templated(value):
            found.append(Found(path, kind, span, value, None, f"templated value {value!r} cannot be resolved"))
            continue
        try:
            found.append(Found(path, kind, span, value, parse(value)))
        except InvalidReference as exc:
            found.append(Found(path, kind, span, value, None, str(exc)))
    return found
