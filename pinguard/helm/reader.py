"""Helm as one scan meets it: the one thing the scanner is handed for charts and their values files.

Each file of a scan has a place among its charts: the outermost folder above it with a Chart.yaml (roots.py),
else the chart the policy deploys it to (`helm.charts[].values`). Where a helm binary is at hand, every chart
of the scan is judged by its renders (judge.py), those the policy names by repository pulled first (fetch.py),
and the files its renders show are read from them. Every other values file is read without Helm (values.py),
against the chart at hand, each chart read once a scan (charts.py). The judging and the reading are imported
when a scan holds a chart or a values file: a scan of other files costs neither.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pinguard.errors import PinguardError
from pinguard.helm.roots import ChartRoots
from pinguard.helm.settings import HelmSettings
from pinguard.sources import kinds
from pinguard.sources.base import Found, Searched, SourceSettings

if TYPE_CHECKING:
    from pinguard.helm.charts import ChartCache
    from pinguard.helm.judge import Judge, JudgedChart


@dataclass(frozen=True)
class InChart:
    """A file of the scan as Helm sees it."""

    path: Path
    root: Path | None  # the chart it lies in, else the one the policy deploys it to; None: no chart's
    named: bool  # the policy deploys it as a values file, wherever it lies and whatever its name
    chart: JudgedChart | None  # its chart as Helm rendered it; None: no chart's, or no helm to render it

    @property
    def folder(self) -> str | None:
        """The chart's folder, as `kinds.detect` takes it."""
        return None if self.root is None else self.root.as_posix()

    def rendered(self) -> list[Found] | None:
        """What the file holds as its chart's renders show it, where they show it (its text is then only set
        aside); None where the file is read as text."""
        if self.chart is None or not self.chart.judges(self.path):
            return None
        from pinguard.helm.judge import found_in

        return found_in(self.chart, self.path)

    def beside(self, found: list[Found], kind: str) -> list[Found]:
        """What reading the file as text found, with what Helm says of it: why its chart was not rendered; or, a
        chart's values read with no helm to render them, never pinned (`Found.pin_needs_helm`)."""
        if self.chart is not None:
            from pinguard.helm.judge import failure_notice

            return [*failure_notice(self.chart, self.path), *found]
        if self.root is not None and kind == kinds.HELM:
            return [replace(item, pin_needs_helm=True) for item in found]
        return found


class HelmReader:
    """What one scan asks of Helm (see the module's docstring), and what it has read: one for each scan."""

    def __init__(self, settings: HelmSettings, deployed: dict[Path, Path], roots: ChartRoots,
                 judge: Judge | None) -> None:
        self._settings = settings
        self._deployed = deployed  # by resolved path, the values files the policy deploys, and their charts
        self._roots = roots
        self._judge = judge
        self._charts: ChartCache | None = None  # made at the scan's first values file read as text

    @classmethod
    def for_scan(cls, settings: HelmSettings, env: Mapping[str, str], walked: Sequence[Path]) -> HelmReader:
        """Helm for the scan of `walked`, run in `env`: every chart of it judged at once (their renders side by
        side). A PinguardError: the helm named cannot pull the charts the scan reads values of, and every chart
        would be misread."""
        settings = _pulled(settings, env, walked)
        deployed = {path.resolve(): d.chart for d in settings.deployments for path in d.values}
        roots = ChartRoots()
        charted = [root for path in walked if kinds.may_hold_images(path.name)
                   and (root := roots.of(path) or deployed.get(path.resolve())) is not None]
        return cls(settings, deployed, roots, _judged(charted, settings, env) if charted else None)

    def in_chart(self, path: Path) -> InChart:
        """Where a file of the scan lies among its charts, and its chart as Helm rendered it. A PinguardError: the
        helm named cannot run, and every chart would be misread."""
        deployed_in = self._deployed.get(path.resolve())
        root = self._roots.of(path) or deployed_in
        chart = None
        if root is not None:
            assert self._judge is not None  # every chart of the scan was judged when it was made
            chart = self._judge.chart_at(root)
        return InChart(path, root, deployed_in is not None, chart)

    def values(self, path: Path, text: str, sources: SourceSettings) -> Searched:
        """A values file read without Helm: against the chart at hand, read once a scan, unless the policy says its
        chart reads `digest:` (`helm.digest-read`)."""
        from pinguard.helm.charts import ChartCache
        from pinguard.helm.values import read

        if self._charts is None:
            self._charts = ChartCache()
        name = path.as_posix()
        return read(name, text, sources, self._charts, digest_read=self._settings.chart_reads_digest(name))


def _pulled(settings: HelmSettings, env: Mapping[str, str], walked: Sequence[Path]) -> HelmSettings:
    """The charts the policy names by repository pulled into the cache (fetch.py), where the scan reads a values
    file of one: a scan of other files reaches no network."""
    remote = {path.resolve() for d in settings.deployments if d.remote is not None for path in d.values}
    if not remote or not any(path.resolve() in remote for path in walked):
        return settings
    from pinguard.helm.fetch import pulled

    return pulled(settings, env)


def _judged(charted: list[Path], settings: HelmSettings, env: Mapping[str, str]) -> Judge:
    """The judge of the scan's charts, every one judged at once."""
    from pinguard.helm.judge import Judge

    judge = Judge(settings, env)
    try:
        judge.judge_all(charted)
    except PinguardError:
        pass  # a helm named that cannot run: reported at the first file of a chart, as `chart_at` raises it again
    return judge
