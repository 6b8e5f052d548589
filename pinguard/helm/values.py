"""Helm values files read without Helm: image scalars, and the structured blocks charts use.

    image:                      image:                      driver:
      registry: docker.io         name: jupyterhub/k8s-hub    repository: nvcr.io/nvidia
      repository: bitnami/nginx   tag: "4.1.0"                image: driver
      tag: 1.25.3                                             version: "595.91.07"
      digest: ""

The reference is assembled as the usual templates render it: `registry`, then
`repository` (or `image`, as ingress-nginx names it) and `tag`; or `name` and
`tag` (JupyterHub), below the registry and namespace every image of the file
takes (`imageRegistry`, `imageNamespace`, at the top or under `global`, as
cert-manager writes them); or, at any depth, `repository/image` and `version`
(NVIDIA's GPU operator names its blocks after components). How it is pinned
depends on what the chart renders:

- the chart at hand (a Chart.yaml above the values file) reads the block's
  `digest` (or `sha`: bare hex where the chart writes `@sha256:{{ .sha }}`, the
  whole digest where it writes `@{{ .sha }}`): the digest goes there, added
  after `tag` when absent;
- otherwise the digest goes into the tag, `tag: 1.25.3@sha256:...`, which the
  usual `{{ .repository }}:{{ .tag }}` renders as a pinned reference
  (see sources/tagform.py). A `digest:` the chart at hand does not read pins nothing:
  it is reported (`Found.unread_digest`), never counted.

Only a values file of no chart is pinned by this reading. Without Helm, the values of a chart
(a Chart.yaml above them, or named by the policy's `helm.charts`) are read here for `scan`,
`lock` and `check`, and never written (`Found.pin_needs_helm`, marked by reader.py):
where a digest goes in them is what `check` takes as pinned, not what `pin` writes.

For the chart of a values file that is not at hand, the policy can say that it
reads `digest` (`helm: {digest-read: [GLOB]}`); a digest already written there is
taken as the user's way of pinning. So is a block the chart hands to a named
template it does not hold (a library chart fetched at build time): nobody can tell.

An empty tag (or one the chart's own values.yaml leaves out) is the chart's
appVersion where the chart at hand visibly defaults it so (`.tag | default
.Chart.AppVersion`): the tag form then writes it, `tag: "1.16.0@sha256:..."`. A
values file alone cannot tell: reported as not resolvable. Blocks of null fields
inherit a global image and are not references.

What the reading does not model, it never pins nor locks (`Found.needs_helm`,
reported by the `needs-helm` rule: only Helm's render can say what runs):

- a flag that changes the rendered tag or name (`_FLAGS`: `distroless: true`
  appends `-distroless`, and so on);
- `version` beside `repository` or `tag`, `image` beside `repository` and `tag`,
  `name` beside `repository`: which the chart renders is its own;
- a registry or namespace set for every image (`imageRegistry`,
  `global.imageRegistry`, ...) beside a block named by `repository` or `image`:
  charts put it before the name, or in place of the block's registry;
- a tag Helm reads as a number or a boolean (`tag: 1.10` is 1.1 to Helm);
- an empty tag the chart at hand does not visibly default to its appVersion
  (`printf "v%s" .Chart.AppVersion`, a helper's default reference);
- with the chart at hand, a tag (or the registry a `name` takes) that a values
  file leaves out while the chart's own values.yaml, or a subchart's, may set it:
  Helm merges them.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.errors import InvalidReference
from pinguard.helm.charts import Chart, ChartCache, chart_root, helm_text
from pinguard.reference import parse
from pinguard.sources import kinds, kubernetes
from pinguard.sources.base import DEFAULT_SETTINGS, DigestField, Found, Searched, SourceSettings
from pinguard.sources.tagform import tag_field
from pinguard.sources.yamlnodes import (
    Located,
    digest_field,
    each_document,
    is_templated,
    mapping_get,
    scalar_text,
    value_span,
)

SOURCE = kinds.HELM
_IMAGE_KEY = re.compile(r"(?i)(^|[a-z])images?$")
# Block flags that change the rendered tag or name in ways the reading does not model: suffixes such as
# `-distroless`, `-hardened` or `-fips`, flavours and variants, a prefix, or a digest rendered instead of the tag.
_FLAGS = ("distroless", "hardened", "fips", "flavor", "variant", "suffix", "tagSuffix", "tagPrefix", "useDigest")
_NAME_SIBLINGS = ("tag", "repository", "registry", "digest", "pullPolicy")  # beside which `name` names an image
_SHARED = ("imageRegistry", "imageNamespace")
# What a tag written whole holds: a tag's characters, and the `+` of a number as Helm prints it (`1e+06`).
_TAG_TEXT = re.compile(r"[\w.+-]+")


def read(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS, charts: ChartCache | None = None,
         *, digest_read: bool = False) -> Searched:
    """The references of a values file, read as the sources read every file (`kinds.find`): a values file that is a
    template line by line, a value YAML aliases reach from several places once."""
    return kinds.find(path, text, SOURCE, settings,
                      source=functools.partial(find, charts=charts, digest_read=digest_read))


def find(path: str, text: str, settings: SourceSettings = DEFAULT_SETTINGS, charts: ChartCache | None = None,
         *, digest_read: bool = False) -> Searched:
    """`digest_read`: the policy says this file's chart reads `digest`, whether or not it is at hand
    (`HelmSettings.chart_reads_digest`); `charts`: the charts the scan has read (`reader.py` holds them, one cache a
    scan); None: this file's chart is read afresh."""
    where = Located(text, path, SOURCE)
    charts = ChartCache() if charts is None else charts
    chart = charts.chart_at_hand(path) if not digest_read else None
    own = chart is not None and _is_chart_values(path)
    found: list[Found] = []
    for document in each_document(text):
        settings.read(document, where)
        blocks = _image_blocks(document)
        # An `image:` name inside a block (`{registry, image, tag}`) is the block's, not a reference of its own.
        found.extend(kubernetes.find_in(document, where, split=True, skip=frozenset(id(block) for _, block in blocks)))
        shared = _Shared.of(document)
        found.extend(_structured(mapping, where, _Pinning(chart, keys, digest_read, own), shared)
                     for keys, mapping in blocks)
    return Searched(sorted(found, key=lambda f: f.span.start))


def _is_chart_values(path: str) -> bool:
    """Whether a values file is its chart's own `values.yaml`, which no other values file lies under."""
    root = chart_root(path)
    return root is not None and Path(path).resolve() == (root / "values.yaml").resolve()


def _is_block(node: MappingNode, below_image: bool) -> bool:
    """Whether a mapping names an image: by `repository` beside `image` anywhere (a bare name, as the GPU
    operator writes it); below an image key, by `repository`, by `image` beside `registry`/`tag`
    (ingress-nginx), or by `name` beside `tag`, `repository`, ... (JupyterHub, cert-manager)."""
    def text(key: str) -> str:
        return scalar_text(mapping_get(node, key)) or ""  # `repository: null` inherits a global image

    def has(*keys: str) -> bool:
        return any(mapping_get(node, key) is not None for key in keys)

    if text("repository") and text("image") and not any(mark in text("image") for mark in ":@"):
        return True
    return below_image and bool(text("repository") or (text("image") and has("registry", "tag"))
                                or (text("name") and has(*_NAME_SIBLINGS)))


def _image_blocks(document: Node) -> list[tuple[tuple[str, ...], MappingNode]]:
    """(values path, block) of every image block (`_is_block`), nested ones included.

    The image key may be the block's own (`image:`, `thanosImage:`) or its parent's
    (`image: {busybox: {...}, kubectl: {...}}`). A list step is written `[]` in the path.
    """
    blocks: list[tuple[tuple[str, ...], MappingNode]] = []
    seen: set[int] = set()
    stack: list[tuple[Node, tuple[str, ...], bool]] = [(document, (), False)]
    while stack:
        node, keys, below_image = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, SequenceNode):
            stack.extend((item, (*keys, "[]"), False) for item in node.value)
            continue
        if not isinstance(node, MappingNode):
            continue
        if _is_block(node, below_image):
            blocks.append((keys, node))
        for key, value in node.value:
            if isinstance(key, ScalarNode) and not isinstance(value, ScalarNode):
                name = str(key.value)
                image_key = _IMAGE_KEY.search(name) is not None
                stack.append((value, (*keys, name), image_key or (below_image and len(keys) > 0 and
                                                                   _IMAGE_KEY.search(keys[-1]) is not None)))
    return sorted(blocks, key=lambda block: block[1].start_mark.index)


@dataclass(frozen=True)
class _Shared:
    """What every image of a values file takes: `imageRegistry` and `imageNamespace`, at the top or under `global`."""

    registry: str
    namespace: str
    written: tuple[str, ...]  # where they are set: `imageRegistry`, `global.imageNamespace`, ...
    problem: str | None  # set in both places, differently

    @classmethod
    def of(cls, document: Node) -> _Shared:
        values: dict[str, str] = {}
        written: list[str] = []
        problem = None
        for key in _SHARED:
            places = {place: text for place, text in ((key, scalar_text(mapping_get(document, key))), (
                f"global.{key}", scalar_text(mapping_get(mapping_get(document, "global"), key)))) if text}
            if len(set(places.values())) > 1:
                problem = f"`{key}` and `global.{key}` differ: which one the chart renders is its own"
            values[key] = next(iter(places.values()), "")
            written.extend(places)
        return cls(values["imageRegistry"], values["imageNamespace"], tuple(written), problem)

    def names(self) -> str:
        return " and ".join(f"`{place}`" for place in self.written)


@dataclass(frozen=True)
class _Shape:
    """How a block names its image: the value that names it, what the chart renders before the tag, the tag's key."""

    named_by: ScalarNode
    name: str
    tag_key: str  # `tag`, or `version` beside `repository` and `image`


def _shape(block: MappingNode, shared: _Shared, pinning: _Pinning) -> _Shape | str:
    """The block's shape, or what in it the reading does not model (only Helm's render can tell)."""
    flags = [f"`{key}`" for key in _FLAGS if _is_set(mapping_get(block, key))]
    if flags:
        return f"{', '.join(flags)} {'change' if len(flags) > 1 else 'changes'} the image the chart renders"
    nodes = {key: mapping_get(block, key) for key in ("registry", "repository", "image", "name", "tag", "version")}
    text = {key: scalar_text(node) or "" for key, node in nodes.items()}
    named, node = _naming(block)
    if named != "name" and shared.names():
        return (f"{shared.names()} set for every image: charts put it before `{named}`, or in place of the "
                "block's registry")
    if text["repository"] and text["image"]:
        if text["tag"] or text["registry"] or text["name"] or any(mark in text["image"] for mark in ":@"):
            return "`image` beside `repository`, and a tag, `registry` or `name` as well"
        image = nodes["image"]
        assert isinstance(image, ScalarNode)
        return _Shape(image, f"{text['repository']}/{text['image']}", "version")
    if text["version"]:
        return f"`version` beside `{named}`: which one holds the tag is the chart's own"
    if named != "name" and text["name"]:
        return f"`name` beside `{named}`: which one the chart renders is its own"
    if named != "name":
        return _Shape(node, "/".join(part for part in (text["registry"], text[named]) if part), "tag")
    if shared.problem:
        return shared.problem
    if nodes["repository"] is not None and not shared.names():
        return "an empty `repository` beside `name`: the chart names the image from values this file does not set"
    chart_reads = [] if shared.names() else pinning.reads_shared()
    if chart_reads and (origin := pinning.left_out()):
        return f"the chart reads {', '.join(f'`{key}`' for key in chart_reads)}, which may come from {origin}"
    if shared.names() and _names_registry(text["name"]):
        return f"a `name` with its registry, and {shared.names()}: whether the chart puts that before it is its own"
    return _Shape(node, "/".join(part for part in (text["registry"], shared.registry, shared.namespace, text["name"])
                                 if part), "tag")


def _names_registry(name: str) -> bool:
    """Whether a name starts with its registry's host (`quay.io/jupyterhub/k8s-hub`)."""
    try:
        return name.startswith(parse(name).registry + "/")
    except InvalidReference:
        return False  # reported when the whole reference is parsed


def _is_set(node: Node | None) -> bool:
    """Whether a value is set as a template's `if` sees it: not absent, null, empty, false or zero."""
    if node is None or not isinstance(node, ScalarNode):
        return node is not None and bool(node.value)  # `{}` and `[]` are empty
    if node.style not in (None, ""):
        return bool(node.value)
    return scalar_text(node) is not None and helm_text(node) not in ("", "false", "0")


@dataclass(frozen=True)
class _Pinning:
    """What decides where a block's digest goes."""

    chart: Chart | None  # the chart at hand, if any
    keys: tuple[str, ...]  # the block's path in the values
    digest_read: bool  # the policy says the chart reads `digest`
    own_values: bool = False  # the file is the chart's own values.yaml (and `chart` is at hand)

    def left_out(self) -> str | None:
        """Where a value the block leaves out comes from when the chart at hand may set it; None: it is unset.

        Helm merges a deployment's values files over the chart's own `values.yaml`, and a parent's values
        over each subchart's: what those leave out is still set.
        """
        if self.chart is None:
            return None
        if not self.own_values:
            return "the chart's own values.yaml"
        in_subchart = bool(self.keys) and self.keys[0] in self.chart.subcharts
        return f"the values of subchart `{self.keys[0]}`" if in_subchart else None

    def reads_shared(self) -> list[str]:
        """The values every image takes (`imageRegistry`, `global.imageNamespace`, ...) that the chart at hand reads."""
        if self.chart is None:
            return []
        return [".".join((*block, key)) for block in ((), ("global",)) for key in _SHARED
                if self.chart.reads(block, key)]

    def field_read(self, declared: str | None, written: bool) -> str | None:
        """`digest` or `sha` when the chart reads it, else None (pin in the tag form).

        `declared`: the field the block has (`digest` or `sha`), `written`: whether it holds a value.
        """
        if self.chart is not None:
            candidates = [declared] if declared else ["digest", "sha"]
            reads = {name: self.chart.reads(self.keys, name) for name in candidates}
            read = next((name for name, answer in reads.items() if answer), None)
            if read is not None or None not in reads.values():
                return read
            # Handed to a helper the chart does not hold: decided as for a chart not at hand.
        if self.digest_read:
            return declared or "digest"
        return declared if written else None

    def sha_is_hex(self) -> bool:
        """Whether `sha:` holds bare hex (the chart writes `@sha256:` itself), else the whole digest."""
        return self.chart is None or self.chart.sha_is_hex(self.keys)


def _structured(image: MappingNode, where: Located, pinning: _Pinning, shared: _Shared) -> Found:
    shape = _shape(image, shared, pinning)
    named_by = shape.named_by if isinstance(shape, _Shape) else _naming(image)[1]
    start, end = value_span(named_by)
    span = where.span(start, end)

    def unresolvable(problem: str, *, needs_helm: bool = False) -> Found:
        return Found(where.path, SOURCE, span, where.text[start:end], None, problem, needs_helm=needs_helm)

    if where.text[start:end] != named_by.value:
        return unresolvable("written with escapes or over several lines; write it as a plain or quoted value")
    if isinstance(shape, str):
        return unresolvable(shape, needs_helm=True)
    tag_node = mapping_get(image, shape.tag_key)
    tag = scalar_text(tag_node) or ""
    if any(is_templated(part) for part in (shape.name, tag)):
        return unresolvable(f"templated value {shape.name + ':' + tag!r} cannot be resolved")
    if tag_node is not None and not isinstance(tag_node, ScalarNode):
        return unresolvable(f"its {shape.tag_key} is not a plain or quoted value; pinguard cannot edit it")
    if tag:
        assert isinstance(tag_node, ScalarNode)
        rendered = helm_text(tag_node)
        if rendered != tag:
            read_as = f"reads it as {rendered}" if rendered is not None else "cannot read it"
            return unresolvable(f"`{shape.tag_key}: {tag}` is not a string to Helm, which {read_as}: quote it",
                                needs_helm=True)
    elif pinning.chart is None:
        return unresolvable(f"no {shape.tag_key}: the chart's appVersion decides it, which a values file does not say")
    elif tag_node is None and (origin := pinning.left_out()):
        return unresolvable(f"no {shape.tag_key}: it may come from {origin}, or be the chart's appVersion",
                            needs_helm=True)
    else:
        app_version = pinning.chart.app_version_tag(pinning.keys, shape.tag_key)
        if app_version is None:
            return unresolvable(f"no {shape.tag_key}: the chart decides it, and its templates do not visibly default "
                                "it to its appVersion", needs_helm=True)
        tag = app_version
    try:
        reference = parse(f"{shape.name}:{tag}")
    except InvalidReference as exc:
        return unresolvable(str(exc))
    declared = next((name for name in ("digest", "sha") if mapping_get(image, name) is not None), None)
    digest_node = mapping_get(image, declared) if declared else None
    current = scalar_text(digest_node) or ""
    read = pinning.field_read(declared, bool(current))
    if read is None:
        field = (tag_field(tag_node, where, flow=image.flow_style is True) if isinstance(tag_node, ScalarNode)
                 and scalar_text(tag_node) else whole_tag_field(image, shape.named_by, where, shape.tag_key, tag))
        if field is None:
            return unresolvable(f"its {shape.tag_key} is not a plain or quoted value; pinguard cannot edit it")
        unread = where.span(*value_span(digest_node)) if current and isinstance(digest_node, ScalarNode) else None
        return Found(where.path, SOURCE, span, named_by.value, reference, digest_field=field, unread_digest=unread)
    hex_only = read == "sha" and pinning.sha_is_hex()
    digest = digest_field(image, tag_node if tag_node is not None else named_by, where, read, hex_only=hex_only)
    if digest is None:
        return unresolvable(f"its {read} field is not a plain or quoted value; pinguard cannot edit it")
    try:
        if current:
            reference = reference.with_digest("sha256:" + current if hex_only else current)
    except InvalidReference as exc:
        return unresolvable(str(exc))
    return Found(where.path, SOURCE, span, named_by.value, reference, digest_field=digest)


def whole_tag_field(mapping: MappingNode, after: Node, where: Located, key: str, tag: str) -> DigestField | None:
    """Where `tag@digest` is written as `key`'s whole value: over the value it holds (empty, null, or a number
    Helm prints otherwise), or as a new entry after `after` (see `digest_field`).

    Quoted, unless its quotes are there: `1.10` unquoted would not read back as the tag Helm renders.
    """
    place = digest_field(mapping, after, where, key) if _TAG_TEXT.fullmatch(tag) else None
    if place is None:
        return None
    held = mapping_get(mapping, key)
    quote = "" if isinstance(held, ScalarNode) and held.style in ("'", '"') else '"'
    return DigestField(place.start, place.end, prefix=f"{place.prefix}{quote}{tag}@", suffix=f"{quote}{place.suffix}")


def _naming(block: MappingNode) -> tuple[str, ScalarNode]:
    """The key that names a block's image (`repository`, `image`, `name`: the first set), and its value."""
    key, node = next((key, node) for key in ("repository", "image", "name")
                     if scalar_text(node := mapping_get(block, key)))
    assert isinstance(node, ScalarNode)
    return key, node
