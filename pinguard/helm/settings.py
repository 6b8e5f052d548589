"""What the policy and the command line say about Helm: which binary, and how each chart is deployed."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Deployment:
    """One way a chart is installed: its values files in order (later ones win) and `--set` pairs."""

    chart: Path
    values: tuple[Path, ...]
    settings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class HelmSettings:
    binary: str | None = None  # `--helm PATH` or the policy's `helm.binary`; None: helm on PATH, if any
    deployments: tuple[Deployment, ...] = ()  # the policy's `helm.charts`; a chart not named is deployed by default
    cache_dir: Path | None = None  # where renders are kept between runs

    def of_chart(self, chart: Path) -> list[Deployment]:
        """How `chart` is deployed: as the policy says, else its `values.yaml` alone and each
        `values*.yaml` beside it over that."""
        named = [deployment for deployment in self.deployments if deployment.chart.resolve() == chart.resolve()]
        if named:
            return named
        defaults = chart / "values.yaml"
        base = (defaults,) if defaults.is_file() else ()
        others = sorted(path for pattern in ("values*.yaml", "values*.yml") for path in chart.glob(pattern)
                        if path.name != "values.yaml" and path.is_file())
        return [Deployment(chart, base), *(Deployment(chart, (*base, other)) for other in others)]
