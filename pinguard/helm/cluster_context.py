"""What a chart asks the cluster, and the values images its renders do not show because of it.

A bare `helm template` answers `.Capabilities.APIVersions` and `.Capabilities.KubeVersion`
with its own defaults, `.Release.IsUpgrade` with false and `lookup` with nothing: an image
a template puts behind one of them (`{{ if .Capabilities.APIVersions.Has
"monitoring.coreos.com/v1" }}`) is missing from the render, though the cluster would run
it. The templates (a subchart's too, where it is vendored as a folder; packaged `.tgz`
subcharts are not read) are searched as text for these, inside their actions, comments
left out.

Where a chart asks and the policy names no cluster for one of its deployments
(`helm.charts[]`: `kube-version`, `api-versions`, `namespace`, `release`, `is-upgrade`),
the chart is reported at its Chart.yaml (`render-context`), and each image its values
files set that no render shows is read as the text reading reads it (`values.py`),
marked unrendered (`not-rendered`) and judged by every other rule as without Helm. So
it is, cluster named or not, where the templates call `lookup`: no render answers it.
Where the chart asks nothing, or the policy names the cluster, the renders are what the
cluster gets: an image they do not show is one the chart does not deploy with these
values (an `enabled: false` component), and is left out.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from pinguard.errors import InvalidReference
from pinguard.helm import values as values_source
from pinguard.helm.charts import ChartCache
from pinguard.helm.trace import Trace
from pinguard.reference import locked_key, parse
from pinguard.sources.base import FILE_START, Found, SourceError
from pinguard.sources.yamlnodes import value_span

_ACTION = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_COMMENT = re.compile(r"^-?\s*/\*")
# What a template may ask the cluster, and the key of a policy's `helm.charts[]` entry that answers it.
_ASKS = ((re.compile(r"\.Capabilities\.APIVersions\b"), "`.Capabilities.APIVersions`", "api-versions"),
         (re.compile(r"\.Capabilities\.KubeVersion\b"), "`.Capabilities.KubeVersion`", "kube-version"),
         (re.compile(r"\.Release\.Is(?:Upgrade|Install)\b"), "`.Release.IsUpgrade`", "is-upgrade"),
         (re.compile(r"(?<![\w.$])lookup\b"), "`lookup`", None))
_EXAMPLES = {"api-versions": "api-versions: [GROUP/VERSION, ...]", "kube-version": 'kube-version: "1.31.0"',
             "is-upgrade": "is-upgrade: true", "namespace": "namespace: NAME"}  # how the policy names each
_MAX_FILES = 5000  # files of a chart looked at
_MAX_FILE_BYTES = 1 << 20  # a template larger is not read


@dataclass(frozen=True)
class Asked:
    """One thing a chart's templates ask the cluster, at the first place that asks it."""

    what: str  # "`.Capabilities.APIVersions`"
    key: str | None  # the policy's key that answers it; None: no render answers it (`lookup`)
    where: str  # "templates/monitor.yaml:3", relative to the chart


def asked(chart: Path) -> list[Asked]:
    """What the templates of `chart` and of its vendored subcharts ask the cluster, in the order of `_ASKS`."""
    first: dict[str, Asked] = {}
    for path in _templates(chart):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if len(data) > _MAX_FILE_BYTES:
            continue
        text = data.decode("utf-8", "replace")
        for action in _ACTION.finditer(text):
            body = action.group(1)
            if _COMMENT.match(body):
                continue
            for pattern, what, key in _ASKS:
                if what not in first and pattern.search(body):
                    line = text.count("\n", 0, action.start()) + 1
                    first[what] = Asked(what, key, f"{path.relative_to(chart).as_posix()}:{line}")
    return [first[what] for _, what, _ in _ASKS if what in first]


def _templates(chart: Path) -> list[Path]:
    """The files of every `templates/` folder below the chart (its subcharts' included), in a fixed order."""
    found: list[Path] = []
    count = 0
    for folder, names, files in os.walk(chart):
        names.sort()
        count += len(files)
        if count > _MAX_FILES:
            break
        if "templates" in Path(folder).relative_to(chart).parts:
            found.extend(Path(folder, name) for name in sorted(files))
    return found


def notice(chart: Path, questions: list[Asked]) -> Found:
    """The finding at the chart's Chart.yaml: what its templates ask, and how the policy answers it."""
    manifest = chart / "Chart.yaml"
    listed = ", ".join(f"{item.what} ({item.where})" for item in questions)
    keys = [_EXAMPLES[item.key] for item in questions if item.key is not None] or [_EXAMPLES["namespace"]]
    lookup = ("; `lookup` no render answers, named or not: what it gates stays `not-rendered`"
              if any(item.key is None for item in questions) else "")
    message = (f"its templates ask the cluster {listed}, which a bare `helm template` answers with defaults, and the "
               "policy names no cluster for it: what they gate is not rendered, nor judged as rendered; name it in "
               f"the policy: `helm: {{charts: [{{chart: {chart.as_posix()}, {', '.join(keys)}}}]}}`{lookup}")
    return Found(manifest.as_posix(), "helm", FILE_START, "", None,
                 message, render_context=message)


def unrendered(values: Mapping[Path, str], uses: Iterable[tuple[str, Trace | None]],
               questions: list[Asked]) -> list[tuple[Path, Found]]:
    """Each image of the values files (by resolved path, their texts) that no rendered image accounts for, with the
    file it is in: read as without Helm, and marked unrendered.

    A rendered image accounts for a values image with the same name and tag, or whose trace runs through its value.
    """
    rendered: set[tuple[str, str] | None] = set()
    traced: set[tuple[Path, int]] = set()
    for image, trace in uses:
        try:
            rendered.add(locked_key(parse(image)))
        except InvalidReference:
            pass  # the render was refused already
        leaves = (trace.whole, trace.tag, trace.name, trace.digest) if trace is not None else ()
        traced.update((leaf.path.resolve(), value_span(leaf.node)[0]) for leaf in leaves if leaf is not None)
    reason = _reason(questions)
    charts = ChartCache()  # each chart read once, whatever the number of its values files
    found: list[tuple[Path, Found]] = []
    for path, text in values.items():
        try:
            searched = values_source.find(path.as_posix(), text, charts=charts)
        except SourceError:
            continue  # Helm read it; what the text reading refuses it says when it reads the file itself
        for item in searched.found:
            key = locked_key(item.reference) if item.reference is not None else None
            if (key is not None and key in rendered) or (path, item.span.start) in traced:
                continue
            found.append((path, replace(item, unrendered=reason, needs_helm=False)))
    return found


def _reason(questions: list[Asked]) -> str:
    """Why no render shows an image, and what to do."""
    what = ", ".join(item.what for item in questions)
    if all(item.key is None for item in questions):
        return (f"the chart's templates call {what}, which no render answers: see what it gates, and say so with "
                "`# pinguard: ignore[not-rendered] REASON`")
    return (f"the chart asks the cluster {what}, and the policy names no cluster for it: name it in the policy's "
            "`helm.charts` entry so Helm renders it")
