"""What the policy and the command line say about Helm: which binary, how each chart is deployed, and which
values files belong to a chart that reads image `digest:` though it is not at hand."""
from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ClusterContext:
    """What the cluster answers a chart's templates, as the policy names it (a bare `helm template` answers
    `.Capabilities` with its defaults, `.Release.IsUpgrade` with false and `lookup` with nothing)."""

    kube_version: str | None = None  # `.Capabilities.KubeVersion`
    api_versions: tuple[str, ...] = ()  # `.Capabilities.APIVersions`
    namespace: str | None = None  # `.Release.Namespace`
    release: str | None = None  # `.Release.Name`
    is_upgrade: bool = False  # `.Release.IsUpgrade`

    def arguments(self) -> list[str]:
        """The flags of `helm template` (3 and 4) that make a render answer as the cluster does."""
        flags = ["--kube-version", self.kube_version] if self.kube_version else []
        for api_version in self.api_versions:
            flags += ["--api-versions", api_version]
        if self.namespace:
            flags += ["--namespace", self.namespace]
        return [*flags, "--is-upgrade"] if self.is_upgrade else flags


@dataclass(frozen=True)
class RemoteChart:
    """A chart the policy names by where it is published, not in this repository: `helm pull` fetches it into
    the cache (fetch.py). `repository`: an `oci://` reference to the chart itself, or a chart repository's URL
    (`https://…`) that holds `name`."""

    repository: str
    name: str | None  # None for `oci://`, whose reference names the chart
    version: str  # exact: the cache keeps one pull of each

    @property
    def location(self) -> str:
        """How messages name it: `oci://host/path/name` or `URL name`, with its version."""
        return f"{self.repository}{'' if self.name is None else ' ' + self.name} --version {self.version}"

    @property
    def key(self) -> str:
        """Its name in the cache: where it is published and its version, hashed."""
        return hashlib.sha256(f"{self.repository}\0{self.name or ''}\0{self.version}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Deployment:
    """One way a chart is installed: its values files in order (later ones win), `--set` pairs, and the cluster
    it is installed in (None: the policy names none, and the render answers as a bare `helm template` does).

    A chart the policy names by repository (`remote`) stands at a path that is no folder until fetch.py pulls
    it into the cache and puts the folder there; `unpulled` then says why a pull failed."""

    chart: Path
    values: tuple[Path, ...]
    settings: tuple[tuple[str, str], ...] = ()
    context: ClusterContext | None = None
    remote: RemoteChart | None = None
    unpulled: str | None = None


@dataclass(frozen=True)
class HelmSettings:
    binary: str | None = None  # `--helm PATH` or the policy's `helm.binary`; None: helm on PATH, if any
    deployments: tuple[Deployment, ...] = ()  # the policy's `helm.charts`; a chart not named is deployed by default
    cache_dir: Path | None = None  # where renders and pulled charts are kept between runs
    # The policy's `registries` rates: the pace of `helm pull` from a registry, as of every request to it.
    rates: tuple[tuple[str, float], ...] = ()
    # The policy's `helm.digest-read`: globs of values files whose chart, not at hand, reads image `digest:`.
    digest_read: tuple[str, ...] = ()

    def chart_reads_digest(self, path: str) -> bool:
        """Whether the policy says the chart of the values file `path` (as the scan names it) reads `digest:`."""
        return any(fnmatch.fnmatchcase(path, pattern) for pattern in self.digest_read)

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
