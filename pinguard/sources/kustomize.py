"""kustomization.yaml `images:` entries: `name`, `newName`, `newTag`, `digest`.

The image is `newName` (else `name`) at `newTag`; pinning fills `digest`,
added after `newTag` when absent. An entry without `newTag` leaves the tag
to the manifests it patches, which are scanned on their own.

Read without kustomize, that is all a kustomization says: its patches,
replacements, components, generators and transformers change images only a
build shows, and a remote resource is something pinguard never fetches. Each
such field is reported (`Found.needs_kustomize`), so the file is never called
clean; with kustomize at hand, the build is read instead (pinguard/kustomize).
"""
from __future__ import annotations

import re
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.errors import InvalidReference
from pinguard.reference import parse
from pinguard.sources import kinds
from pinguard.sources.base import DEFAULT_SETTINGS, Found, Searched, SourceSettings
from pinguard.sources.yamlnodes import (
    Located,
    compose,
    digest_field,
    is_templated,
    mapping_get,
    scalar_text,
    value_span,
)

SOURCE = kinds.KUSTOMIZE
# Fields that change images in ways only a build shows.
UNMODELED = ("patches", "patchesStrategicMerge", "patchesJson6902", "replacements", "components", "transformers",
             "generators", "helmCharts", "helmChartInflationGenerator")
REFERRING = ("resources", "bases", "components")  # entries naming other kustomizations: perhaps remote ones
# A URL, an scp-like git address, a go-getter form, or a host name leading a path (`github.com/org/repo`).
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*::|[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:|[\w-]+(?:\.[\w-]+)+(?::\d+)?/)",
                     re.IGNORECASE)


def is_remote(entry: str, folder: Path) -> bool:
    """Whether a `resources`/`bases`/`components` entry names something kustomize would fetch, not a local path."""
    if "://" in entry or "?ref=" in entry or entry.startswith("git@"):
        return True
    return bool(_REMOTE.match(entry)) and not (folder / entry).exists()


def remote_entries(document: Node) -> list[ScalarNode]:
    """The `resources`, `bases` and `components` entries of a kustomization that are remote."""
    return [node for key in REFERRING for node in _entries(mapping_get(document, key))]


def _entries(node: Node | None) -> list[ScalarNode]:
    return [item for item in node.value if isinstance(item, ScalarNode)] if isinstance(node, SequenceNode) else []


def unmodeled(path: str, text: str, documents: list[Node]) -> list[Found]:
    """What only a build can judge: each field above that is set, each remote resource, at its line."""
    where = Located(text, path, SOURCE)
    folder = Path(path).parent
    found: list[Found] = []
    for document in documents:
        if not isinstance(document, MappingNode):
            continue
        for key, value in document.value:
            if isinstance(key, ScalarNode) and key.value in UNMODELED and _set(value):
                found.append(_unmodeled(where, key, f"`{key.value}` changes images that only a build shows: let "
                                                    "kustomize build it (`--kustomize PATH`, or kubectl or kustomize "
                                                    "on PATH)"))
        for entry in remote_entries(document):
            if is_remote(str(entry.value), folder):
                found.append(_unmodeled(where, entry, f"the remote resource {entry.value!r} is fetched at build "
                                                      "time: vendor it into the repository to check and pin it"))
    return found


def _set(value: Node) -> bool:
    return not (isinstance(value, ScalarNode) and value.value in ("", "null", "~")) and value.value != []


def _unmodeled(where: Located, node: ScalarNode, problem: str) -> Found:
    start, end = node.start_mark.index, node.end_mark.index
    return Found(where.path, SOURCE, where.span(start, end), where.text[start:end], None, problem,
                 needs_kustomize=True)


def find(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS) -> Searched:
    where = Located(text, path, SOURCE)
    documents = compose(text)
    found = unmodeled(path, text, documents)
    for document in documents:
        settings.read(document, where)
        images = mapping_get(document, "images")
        if isinstance(images, SequenceNode):
            for entry in images.value:
                item = _entry(entry, where) if isinstance(entry, MappingNode) else None
                if item is not None:
                    found.append(item)
    return Searched(sorted(found, key=lambda item: item.span.start))


def _entry(entry: MappingNode, where: Located) -> Found | None:
    name_node = mapping_get(entry, "newName") or mapping_get(entry, "name")
    tag_node = mapping_get(entry, "newTag")
    name, tag = scalar_text(name_node), scalar_text(tag_node)
    if not isinstance(name_node, ScalarNode) or not name or tag_node is None or not tag:
        return None
    start, end = value_span(name_node)
    span = where.span(start, end)
    if where.text[start:end] != name:
        return Found(where.path, SOURCE, span, where.text[start:end], None,
                     "written with escapes or over several lines; write it as a plain or quoted value")
    if is_templated(name) or is_templated(tag):
        return Found(where.path, SOURCE, span, name, None, f"templated value {name}:{tag!r} cannot be resolved")
    field = digest_field(entry, tag_node, where, "digest")
    try:
        reference = parse(f"{name}:{tag}")
        digest = scalar_text(mapping_get(entry, "digest"))
        if digest:
            reference = reference.with_digest(digest)
    except InvalidReference as exc:
        return Found(where.path, SOURCE, span, name, None, str(exc))
    if field is None:
        return Found(where.path, SOURCE, span, name, None, "its digest is not a plain or quoted value; cannot pin it")
    return Found(where.path, SOURCE, span, name, reference, digest_field=field)
