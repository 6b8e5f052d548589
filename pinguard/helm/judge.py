"""Charts read from their renders where Helm is at hand.

The files of a chart (the outermost folder above them with a Chart.yaml) are
not read as text: each deployment of the chart (settings.py) is rendered, every
image in every render is found as a Kubernetes manifest's are (containers, init
and ephemeral containers, CRDs such as RayCluster and RayJob), and each is
reported at the values line that controls it (trace.py). An image no values line
controls is reported at the chart's Chart.yaml, "fixed by the chart". Templates
yield nothing of their own: what they render is judged in the render. Where the
templates ask the cluster what the policy does not name, the images no render shows
are read from the values as text, and said to be unrendered (context.py). A chart
Helm refuses to render is read as text, with that said, and never pinned.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from pinguard.helm.binary import Helm, RenderFailed, locate
from pinguard.helm.cluster_context import asked, notice, unrendered
from pinguard.helm.renders import Renderer
from pinguard.helm.settings import Deployment, HelmSettings
from pinguard.helm.trace import Leaves, Parts, Trace, name_forms
from pinguard.read.files import TextFile, UnreadableFile
from pinguard.reference import parse
from pinguard.sources import kubernetes
from pinguard.sources.base import FILE_START, Found, SourceError
from pinguard.sources.yamlnodes import value_span

FIXED = "no values line sets it: the chart writes it (in a template, or from its appVersion)"


@dataclass(eq=False)
class ImageUse:
    """One image string some render of the chart holds, and the leaves that control it."""

    image: str
    trace: Trace | None
    deployments: list[int] = field(default_factory=list)  # indexes into the chart's deployments
    alternates: list[Trace] = field(default_factory=list)  # other blocks that print it whole, or its tag and name


@dataclass(eq=False)
class JudgedChart:
    root: Path
    renderer: Renderer
    deployments: list[Deployment]
    uses: dict[str, ImageUse] = field(default_factory=dict)
    found: dict[Path, list[Found]] = field(default_factory=dict)  # by resolved path: values files, Chart.yaml
    texts: dict[Path, str] = field(default_factory=dict)  # by resolved path: every values file read
    failure: str | None = None  # why Helm did not render it: read as text then, never pinned

    def judges(self, path: Path) -> bool:
        """Whether `path` is read from the renders (values files deployed, templates, subcharts, Chart.yaml),
        not as text: never where Helm did not render the chart."""
        if self.failure is not None:
            return False
        resolved = path.resolve()
        if resolved in self.found or resolved == (self.root / "Chart.yaml").resolve():
            return True
        relative = resolved.relative_to(self.root.resolve()).parts
        return bool(relative) and relative[0] in ("templates", "charts")


class Judge:
    """Judges each chart once per run (`roots.py` finds which chart a file is in)."""

    def __init__(self, settings: HelmSettings, env: Mapping[str, str]) -> None:
        self._settings = settings
        self._env = env
        self._helm: Helm | None = None
        self._located = False
        self._charts: dict[Path, JudgedChart] = {}

    def chart_at(self, root: Path) -> JudgedChart | None:
        """The chart at `root` as Helm renders it; None without a helm to render it."""
        if self._binary() is None:
            return None
        key = root.resolve()
        if key not in self._charts:
            self._charts[key] = self._judge(root)
        return self._charts[key]

    def judge_all(self, roots: Iterable[Path]) -> None:
        """Judges these charts side by side (Helm renders one while another's render is read); `chart_at` answers
        from them. A helm named that cannot run raises here, as from `chart_at`."""
        if self._binary() is None:
            return
        waiting = list(dict.fromkeys(root for root in roots if root.resolve() not in self._charts))
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            for root, chart in zip(waiting, pool.map(self._judge, waiting), strict=True):
                self._charts[root.resolve()] = chart

    def _binary(self) -> Helm | None:
        if not self._located:
            self._helm = locate(self._settings.binary, self._env, self._settings.cache_dir)
            self._located = True
        return self._helm

    def _judge(self, root: Path) -> JudgedChart:
        helm = self._binary()
        assert helm is not None
        chart = JudgedChart(root, Renderer(helm, self._settings.cache_dir, self._env), self._settings.of_chart(root))
        unpulled = next((d.unpulled for d in chart.deployments if d.unpulled is not None), None)
        if unpulled is not None:  # a chart the policy names by repository, which could not be pulled (fetch.py)
            chart.failure = f"{unpulled}; read as text, and not pinned"
            return chart
        try:
            subcharts = _subchart_values(root, ())
            for index, deployment in enumerate(chart.deployments):
                _read_render(chart, index, deployment, subcharts)
        except (RenderFailed, SourceError) as exc:
            chart.failure = f"helm template failed ({exc}); read as text, and not pinned"
            chart.uses.clear()
            chart.found.clear()
            return chart
        for use in chart.uses.values():
            found = _found(chart, use)
            chart.found.setdefault(Path(found.path).resolve(), []).append(found)
        for deployment in chart.deployments:
            for path in deployment.values:
                chart.found.setdefault(path.resolve(), [])
        _unrendered(chart)
        if any(deployment.remote is not None for deployment in chart.deployments):
            _outside_repository(chart)
        for found_in_file in chart.found.values():
            found_in_file.sort(key=lambda item: item.span.start)
        return chart


def found_in(chart: JudgedChart, path: Path) -> list[Found]:
    """What a file the chart `judges` holds, as its renders show it."""
    return [replace(item, path=path.as_posix()) for item in chart.found.get(path.resolve(), [])]


def failure_notice(chart: JudgedChart, path: Path) -> list[Found]:
    """For a values file of a chart Helm did not render, the finding that says so; else nothing."""
    if chart.failure is None or path.resolve() not in {v.resolve() for d in chart.deployments for v in d.values}:
        return []
    return [Found(path.as_posix(), "helm", FILE_START, "", None, chart.failure)]


def _read_render(chart: JudgedChart, index: int, deployment: Deployment,
                 subcharts: list[tuple[Path, str, tuple[str, ...]]]) -> None:
    rendered = chart.renderer.render(deployment)
    own = chart.root / "values.yaml"  # Helm merges the chart's own values under a deployment's, listed or not
    unlisted = own.is_file() and own.resolve() not in {path.resolve() for path in deployment.values}
    files = [*subcharts, *([(own, _text(own), ())] if unlisted else []),
             *((path, text, ()) for path, text in zip(deployment.values, chart.renderer.values_texts(deployment),
                                                     strict=True))]
    chart.texts.update((path.resolve(), text) for path, text, _ in files)
    leaves = Leaves(files)
    images = kubernetes.find("<render>", rendered).found
    for item in images:
        if item.reference is None:
            raise RenderFailed(f"it renders the image {item.value!r}, which is no reference: {item.problem}")
    # A block naming something that is not this image's name, but another rendered image's, is that image's.
    named = frozenset(form for item in images for form in name_forms(Parts.of(item.value).name))
    for image in dict.fromkeys(item.value for item in images):
        use = chart.uses.get(image)
        if use is None or use.trace is None:
            traces = leaves.traces(image, named)
            use = chart.uses[image] = ImageUse(image, traces[0] if traces else None, use.deployments if use else [],
                                               traces[1:])
        if index not in use.deployments:
            use.deployments.append(index)


def _unrendered(chart: JudgedChart) -> None:
    """Where the chart asks the cluster what the policy does not name for a deployment: the chart reported, and each
    image its values set that no render shows, read as without Helm (context.py)."""
    questions = asked(chart.root)
    unnamed = any(deployment.context is None for deployment in chart.deployments)
    unanswered = questions if unnamed else [item for item in questions if item.key is None]  # `lookup`: never
    if not unanswered:
        return
    if unnamed:
        chart.found.setdefault((chart.root / "Chart.yaml").resolve(), []).append(notice(chart.root, questions))
    for path, found in unrendered(chart.texts, ((use.image, use.trace) for use in chart.uses.values()), unanswered):
        chart.found.setdefault(path, []).append(found)


def _subchart_values(chart: Path, at: tuple[str, ...]) -> list[tuple[Path, str, tuple[str, ...]]]:
    """The values.yaml of each subchart vendored as a folder, with the key its values sit under, deepest first
    (a parent's values override its subcharts')."""
    found: list[tuple[Path, str, tuple[str, ...]]] = []
    folder = chart / "charts"
    for subchart in sorted(folder.iterdir()) if folder.is_dir() and len(at) < 8 else ():
        values = subchart / "values.yaml"
        if subchart.is_dir() and (subchart / "Chart.yaml").is_file():
            found.extend(_subchart_values(subchart, (*at, subchart.name)))
            if values.is_file():
                found.append((values, _text(values), (*at, subchart.name)))
    return found


def _text(values: Path) -> str:
    try:
        return TextFile.read(values).text
    except UnreadableFile as exc:
        raise RenderFailed(f"{values}: {exc}") from None


def _outside_repository(chart: JudgedChart) -> None:
    """A chart pulled from elsewhere (fetch.py) lies in the cache, no file of this repository: what is found in its
    files (the images its own values.yaml sets, those it fixes, its Chart.yaml) is reported at the start of the last
    values file of each deployment that renders it (each, for the chart), where `pin` writes an override
    (overrides.py)."""
    root = chart.root.resolve()
    for use in chart.uses.values():  # only the likeliest block is overridden: the others would be written in place
        use.alternates = [trace for trace in use.alternates if not any(leaf is not None and leaf.path.resolve(
        ).is_relative_to(root) for leaf in (trace.whole, trace.tag, trace.name))]
    for path in [path for path in chart.found if path.is_relative_to(root)]:
        for found in chart.found.pop(path):
            rendering = chart.uses.get(found.rendered or "")
            indexes = rendering.deployments if rendering is not None else range(len(chart.deployments))
            for home in dict.fromkeys(chart.deployments[index].values[-1].resolve() for index in indexes):
                chart.found.setdefault(home, []).append(replace(
                    found, path=home.as_posix(), span=FILE_START, value="", digest_field=None, unread_digest=None))


def _found(chart: JudgedChart, use: ImageUse) -> Found:
    reference = parse(use.image)
    parts = Parts.of(use.image)
    if use.trace is not None and use.trace.tag is not None and parts.digest and not parts.tag:
        # The chart writes `name@digest` in place of the tag: the entry is the tag's the values name.
        reference = parse(f"{parts.name}:{use.trace.tag.printed.partition('@')[0]}@{parts.digest}")
    leaf = use.trace.primary if use.trace is not None else None
    if leaf is None:
        manifest = chart.root / "Chart.yaml"
        return Found(manifest.as_posix(), "helm", FILE_START, "", reference, rendered=use.image, fixed=FIXED)
    start, end = value_span(leaf.node)
    unread = None
    digest = use.trace.digest if use.trace is not None else None
    if digest is not None and digest.printed not in (parts.digest, parts.digest.partition(":")[2]):
        unread = digest.where.span(*value_span(digest.node))
    return Found(leaf.where.path, "helm", leaf.where.span(start, end), leaf.where.text[start:end], reference,
                 unread_digest=unread, rendered=use.image)

