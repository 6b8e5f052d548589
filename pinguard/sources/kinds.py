"""Which kind a file is, and the references in it, found by that kind's source.

Kind detection lives here and only here: by file name first, then by place (YAML in a
chart's folder, or named by the policy, is Helm values), then, for generic YAML, by a
cheap look at the top-level keys. Every source of this package is found through one
table, each source's `find(path, text, settings)`; Helm's values are read by
pinguard.helm (values.py), above the sources, which hands `find` its own. A YAML file
that is no YAML but a template is read line by line (`templates.py`) under its own kind.
A source's module is imported when the first file of its kind is read: checking one
manifest costs none of the others.
"""
from __future__ import annotations

import functools
import importlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import PurePosixPath

from yaml.nodes import MappingNode, Node, ScalarNode

from pinguard.sources.base import (
    DEFAULT_SETTINGS,
    ActionUse,
    DocumentReader,
    Found,
    Searched,
    SourceError,
    SourceSettings,
    Unreadable,
)
from pinguard.sources.yamlnodes import Located, compose

# Each kind, named here once (each source's SOURCE is one of them), and the module of pinguard.sources that
# reads it: all but HELM, whose values pinguard.helm reads (values.py).
COMPOSE, DOCKERFILE, HELM, KUBERNETES = "compose", "dockerfile", "helm", "kubernetes"
KUSTOMIZE, RUNTIME_ENV, TEMPLATE, WORKFLOW = "kustomize", "runtime_env", "template", "workflow"
MODULES: Mapping[str, str] = {COMPOSE: "compose", DOCKERFILE: "dockerfile", KUBERNETES: "kubernetes",
                              KUSTOMIZE: "kustomize", RUNTIME_ENV: "runtime_env", TEMPLATE: "templates",
                              WORKFLOW: "workflow"}

# YAML or JSON, or a template of it. `-template` and `.in` files are mostly filled by envsubst or
# configure and are YAML as they stand; the others are templates (`_TEMPLATE_NAME`).
_YAML_NAME = re.compile(r"\.(ya?ml|json)([.-]template|\.tmpl|\.gotmpl|\.tpl|\.j2|\.in)?$", re.IGNORECASE)
_TEMPLATE_NAME = re.compile(r"\.tpl$|\.(ya?ml|json)\.(template|tmpl|gotmpl|j2)$", re.IGNORECASE)
_DOCKERFILE_NAME = re.compile(r"(^|[.\-_])(docker|container)file([.\-_]|$)", re.IGNORECASE)
_COMPOSE_NAME = re.compile(r"(^|[.\-_])(docker-)?compose([.\-_][^/]*)?\.ya?ml$", re.IGNORECASE)
_VALUES_NAME = re.compile(r"(^|[.\-_])values([.\-_][^/]*)?\.ya?ml$", re.IGNORECASE)
_KUSTOMIZATION_NAME = re.compile(r"(^|[.\-_])kustomization\.ya?ml$", re.IGNORECASE)
_VALUES_PLACE_NAME = re.compile(r"\.ya?ml$", re.IGNORECASE)
_CHART_FILES = ("Chart.yaml", "Chart.lock", "requirements.yaml", "requirements.lock")  # what Helm reads as no values
_RUNTIME_ENV_NAME = re.compile(r"(^|[.\-_])runtime[_-]env([.\-_][^/]*)?\.(ya?ml|json)$", re.IGNORECASE)


Finder = Callable[[str, str, SourceSettings], Searched]  # a source's `find(path, text, settings)`


def finder(kind: str) -> Finder:
    """The `find` of the source that reads `kind`, its module imported the first time."""
    found: Finder = importlib.import_module(
        f"pinguard.sources.{MODULES[kind]}").find
    return found


def may_hold_images(name: str) -> bool:
    """Whether a file of this name is worth reading at all: every file that `detect` gives a kind."""
    return bool(_YAML_NAME.search(name) or _TEMPLATE_NAME.search(name) or _is_dockerfile(name))


def _is_dockerfile(name: str) -> bool:
    return bool(_DOCKERFILE_NAME.search(name)) and not _YAML_NAME.search(name) and not name.lower().endswith(".md")


def detect(path: str, text: str, *, chart: str | None = None, named_values: bool = False) -> str:
    """The source kind of a file whose name `may_hold_images`: by name, then by its place, then by its top-level keys.

    `chart`: the folder of the chart the file lies in; `named_values`: the policy deploys it as a values file.
    """
    name = PurePosixPath(path).name
    if _is_dockerfile(name):
        return DOCKERFILE  # a templated Dockerfile too: FROM lines are found the same way
    if _TEMPLATE_NAME.search(name):
        return TEMPLATE
    if named_values:
        return HELM
    if _RUNTIME_ENV_NAME.search(name):
        return RUNTIME_ENV
    if _KUSTOMIZATION_NAME.search(name):
        return KUSTOMIZE
    if "/.github/workflows/" in f"/{path}" or name in ("action.yml", "action.yaml"):
        return WORKFLOW
    if _COMPOSE_NAME.search(name):
        return COMPOSE
    top = _TopLevel(text)
    if _VALUES_NAME.search(name) or (chart is not None and _values_by_place(path, top, chart)):
        return HELM
    if top.has("jobs") and any(top.has(on) for on in ("on", '"on"', "'on'", "true")):
        return WORKFLOW
    if not top.has("apiVersion"):
        if top.has("services"):
            return COMPOSE
        if top.has("images"):
            return KUSTOMIZE
    return KUBERNETES


def _values_by_place(path: str, top: _TopLevel, chart: str) -> bool:
    """Whether a file in a chart's folder is values handed to Helm (`-f env/prod.yaml`): YAML that is none of the
    chart's own files (Chart.yaml, Chart.lock, its templates, its CRDs) and no Kubernetes object."""
    parts = PurePosixPath(os.path.relpath(os.path.abspath(path), os.path.abspath(chart))).parts
    if not _VALUES_PLACE_NAME.search(parts[-1]) or parts[-1] in _CHART_FILES or parts[0] == "..":
        return False
    return not set(parts[:-1]) & {"templates", "crds"} and not (top.has("apiVersion") and top.has("kind"))


class _TopLevel:
    """The top-level keys of a text, asked one by one."""

    def __init__(self, text: str) -> None:
        self.text = text

    def has(self, key: str) -> bool:
        """Whether a line starts with `key:`, or with a key that decodes to it; a substring search, far cheaper than
        a regular expression, unless a line starts with a quoted, escaped, tagged or anchored key."""
        return self.text.startswith(key + ":") or f"\n{key}:" in self.text or key in self._written

    @functools.cached_property
    def _written(self) -> frozenset[str]:  # decoded once a file, whatever the questions
        return _written_keys(self.text)


_KEY_STARTS = "\"'!?&"  # how a key written other than plain starts: quoted (`"\x6aobs":`), tagged, explicit, anchored


def _written_keys(text: str) -> frozenset[str]:
    """The top-level keys written other than plain, decoded as Go's YAML reads them (`"\x6aobs"` is `jobs`), each
    read from its line alone, with the file's directives (`%TAG`); a line that is no YAML alone names none."""
    if text[:1] not in _KEY_STARTS and not any(f"\n{start}" in text for start in _KEY_STARTS):
        return frozenset()
    lines = text.splitlines()
    directives = [line for line in lines if line.startswith("%")]
    keys: set[str] = set()
    for line in lines:
        if line and line[0] in _KEY_STARTS:
            try:
                documents = compose("\n".join([*directives, "---", line]) if directives else line)
            except SourceError:
                continue
            keys.update(str(key.value) for document in documents if isinstance(document, MappingNode)
                        for key, _ in document.value if isinstance(key, ScalarNode))
    return frozenset(keys)


def find(path: str, text: str, kind: str, settings: SourceSettings = DEFAULT_SETTINGS,
         source: Finder | None = None) -> Searched:
    """The references in a file of a known kind, and the actions a workflow uses; a YAML file that is a template is
    read line by line (its actions unread: no workflow is a template).

    `settings` carry what the policy tells the sources, and who else reads each document they compose. `source`:
    what reads the kind where it is none of this package's (Helm's values); None: the kind's own in `MODULES`.
    """
    templated = _Templated(settings.reader) if "{{" in text else None
    if templated is not None:
        settings = replace(settings, reader=templated)
    actions: tuple[ActionUse, ...] = ()
    try:
        found, actions = (finder(kind) if source is None else source)(path, text, settings)
    except SourceError as exc:
        from pinguard.sources import templates

        if kind == DOCKERFILE or isinstance(exc, Unreadable) or not templates.looks_templated(text, kind):
            raise
        if settings.reader is not None:  # the documents before the error were no YAML either
            settings.reader.forget(path)
        found = templates.lines(path, text, kind)
    if templated is not None and templated.found:
        found = sorted([*found, *templated.found], key=lambda item: item.span.start)
    # A YAML alias reaches one written value from several places: it is one reference.
    unique: dict[int, Found] = {}
    for item in found:
        unique.setdefault(item.span.start, item)
    return Searched(list(unique.values()), actions)


class _Templated:
    """`image: {{ .Values.image }}`, valid YAML and a template all the same: found in each document as the source
    composes it, which then goes on to `reader`."""

    def __init__(self, reader: DocumentReader | None) -> None:
        self.reader = reader
        self.found: list[Found] = []

    def __call__(self, document: Node, where: Located) -> None:
        from pinguard.sources import templates

        self.found.extend(templates.templated_mappings([document], where))
        if self.reader is not None:
            self.reader(document, where)

    def forget(self, path: str) -> None:
        self.found.clear()
        if self.reader is not None:
            self.reader.forget(path)
