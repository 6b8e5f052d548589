"""Find every image reference under some paths: what `scan`, `lock`, `pin` and `check` share.

A scan is handed what it reads with (`ScanSettings`): what the sources are told, the Helm and kustomize
that judge charts and kustomizations as they deploy them, and the environment those tools run in, the
one the command line was handed.
"""
from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pinguard.errors import PinguardError
from pinguard.helm.roots import ChartRoots
from pinguard.helm.settings import HelmSettings
from pinguard.kustomize.settings import NAMES, KustomizeSettings
from pinguard.read.files import TextFile, UnreadableFile, walk
from pinguard.sources import kinds
from pinguard.sources.base import DEFAULT_SETTINGS, Found, SourceError, SourceSettings

if TYPE_CHECKING:  # Helm's judging and the charts beside values files are imported when a file needs them
    from pinguard.helm.judge import Judge, JudgedChart
    from pinguard.kustomize.judge import Builds
    from pinguard.kustomize.judge import Judge as KustomizeJudge


@dataclass(frozen=True)
class ScanSettings:
    """What a scan reads with (see the module's docstring)."""

    sources: SourceSettings = DEFAULT_SETTINGS
    helm: HelmSettings = field(default_factory=HelmSettings)  # which helm renders charts, and how they are deployed
    kustomize: KustomizeSettings = field(default_factory=KustomizeSettings)  # which binary builds kustomizations
    # What helm and kubectl run with; None: this process's own (a caller that was handed none).
    env: Mapping[str, str] | None = field(default=None, compare=False, repr=False)

    @property
    def tools_env(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env


DEFAULT_SCAN = ScanSettings()


@dataclass(frozen=True)
class ScannedFile:
    file: TextFile
    kind: str
    found: list[Found]
    chart: JudgedChart | None = field(default=None, repr=False, compare=False)  # the chart Helm judged it in
    kustomization: Builds | None = field(default=None, repr=False, compare=False)  # the builds that read it


@dataclass
class Scan:
    files: list[ScannedFile] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "path:line:column: message", one per bad file

    @property
    def found(self) -> list[Found]:
        return [item for scanned in self.files for item in scanned.found]


def scan_paths(paths: Sequence[str], settings: ScanSettings = DEFAULT_SCAN) -> Scan:
    """Read every file a source kind knows; a file that cannot be read or parsed is an error, the rest go on."""
    result = Scan()
    with collector_paused():
        result.files.extend(each_file(paths, result.errors, settings))
    return result


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector paused, for the loop that reads files and drops their documents; as it was after.

    Parsing makes millions of objects and no cycles worth collecting, and each document lives while it
    is searched and checked: a collector left running traces every node of it, again at each generation.
    Without the pause, scanning 5,000 manifests takes a tenth longer and one 10 MB file three times as
    long; pausing around each file's parse alone, twice as long: the collector, resumed, traces the
    documents still held.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def scan_for_writing(paths: Sequence[str], settings: ScanSettings) -> Scan:
    """The scan a writing command needs: every file read, else a PinguardError naming each one that was not."""
    result = scan_paths(paths, settings)
    if result.errors:
        raise PinguardError("nothing written: fix the files above first", details=result.errors)
    return result


def paths_without_references(paths: Sequence[str], result: Scan) -> list[str]:
    """The paths named (the current folder when none) under which `result`, their scan, found no image reference."""
    holding = {Path(os.path.abspath(scanned.file.path)) for scanned in result.files if scanned.found}
    held = {folder for path in holding for folder in (path, *path.parents)}
    return [path for path in paths or ["."] if Path(os.path.abspath(path)) not in held]


def each_file(paths: Sequence[str], errors: list[str],
              settings: ScanSettings = DEFAULT_SCAN) -> Iterator[ScannedFile]:
    """Each file scanned, as soon as it is: callers that look at one file at a time keep none.

    A file that cannot be read or parsed adds "path:line:column: message" to `errors`,
    and so does a path named that does not exist or is not a file pinguard reads: a
    typo in a CI gate must fail it, not pass it with nothing checked. Every other file
    named is read: `may_hold_images` and `detect` agree on which files have a kind.
    """
    named = [argument for argument in paths if _usable(argument, errors)]
    if paths and not named:
        return  # every path named was wrong: reading the current folder instead would hide it
    roots = ChartRoots()
    walked = list(walk(named, Path.cwd()))  # every kustomization of the scan is known before any is built
    try:
        settings = _with_pulled_charts(settings, walked)
    except PinguardError as exc:  # the helm named cannot run: every chart would be misread
        errors.append(str(exc))
        return
    # The values files the policy deploys, and their charts: values, wherever they lie and whatever their name.
    deployed = {path.resolve(): d.chart for d in settings.helm.deployments for path in d.values}
    kustomized = _kustomize_judge(walked, settings)
    judge = _charts_judged(walked, roots, deployed, settings)
    for path in walked:
        if not kinds.may_hold_images(path.name):
            continue
        try:
            file = TextFile.read(path)
        except UnreadableFile as exc:
            errors.append(f"{path}:1:1: {exc}")
            continue
        deployed_in = deployed.get(path.resolve())
        root = roots.of(path) or deployed_in
        kind = kinds.detect(path.as_posix(), file.text, chart=None if root is None else root.as_posix(),
                            named_values=deployed_in is not None)
        chart = None
        if root is not None:
            from pinguard.helm.judge import failure_notice, found_in

            assert judge is not None  # every root of the scan was judged before the loop
            try:
                chart = judge.chart_at(root)
            except PinguardError as exc:  # the helm named cannot run: every chart would be misread
                errors.append(f"{path}:1:1: {exc}")
                return
        if chart is not None and chart.judges(path):  # its text would only be read to be set aside
            yield ScannedFile(file, kind, found_in(chart, path), chart)
            continue
        try:
            built = kustomized.owners(path) if kustomized is not None else None
        except PinguardError as exc:  # the kustomize named cannot run: every kustomization would be misread
            errors.append(f"{path}:1:1: {exc}")
            return
        if built is not None and built.judges(path):
            from pinguard.kustomize.judge import found_in as built_found_in

            yield ScannedFile(file, kind, built_found_in(built, path), kustomization=built)
            continue
        if kind == kinds.HELM and settings.sources.charts is None:
            from pinguard.sources.charts import ChartCache

            # The charts beside values files: each read once a scan.
            settings = replace(settings, sources=replace(settings.sources, charts=ChartCache()))
        try:
            searched = kinds.find(path.as_posix(), file.text, kind, settings.sources)
        except SourceError as exc:
            errors.append(f"{path}:{exc.line}:{exc.column}: {exc}")
            continue
        found = searched.found if chart is None else [*failure_notice(chart, path), *searched.found]
        if root is not None and chart is None and kind == kinds.HELM:  # a chart's values, and no helm to render them
            found = [replace(item, pin_needs_helm=True) for item in found]
        if built is not None:
            from pinguard.kustomize.judge import failure_notice as build_failure

            found = [*build_failure(built, path), *found]
        yield ScannedFile(file, kind, found, chart, built)


def _with_pulled_charts(settings: ScanSettings, walked: list[Path]) -> ScanSettings:
    """The charts the policy names by repository pulled into the cache (helm/fetch.py), where the scan reads a values
    file of one: a scan of other files reaches no network."""
    remote = {path.resolve() for d in settings.helm.deployments if d.remote is not None for path in d.values}
    if not remote or not any(path.resolve() in remote for path in walked):
        return settings
    from pinguard.helm.fetch import pulled

    return replace(settings, helm=pulled(settings.helm, settings.tools_env))


def _charts_judged(walked: list[Path], roots: ChartRoots, deployed: dict[Path, Path],
                   settings: ScanSettings) -> Judge | None:
    """The judge of the scan's charts, every one judged at once (their renders side by side); None (nothing
    imported) when the scan holds none."""
    charted = [root for path in walked if kinds.may_hold_images(path.name)
               and (root := roots.of(path) or deployed.get(path.resolve())) is not None]
    if not charted:
        return None
    from pinguard.helm.judge import Judge

    judge = Judge(settings.helm, settings.tools_env)
    try:
        judge.judge_all(charted)
    except PinguardError:
        pass  # a helm named that cannot run: reported at the first file of a chart, as `chart_at` raises it again
    return judge


def _kustomize_judge(walked: list[Path], settings: ScanSettings) -> KustomizeJudge | None:
    """The judge of the scan's kustomizations by their builds; None (nothing imported) when it holds none."""
    found = [path for path in walked if path.name in NAMES]
    if not found:
        return None
    from pinguard.kustomize.judge import Judge as KustomizeJudge

    return KustomizeJudge(settings.kustomize, settings.tools_env, found, walked)


def _usable(argument: str, errors: list[str]) -> bool:
    if not os.path.exists(argument):
        errors.append(f"{argument}: no such file or folder")
        return False
    if not os.path.isdir(argument) and not kinds.may_hold_images(os.path.basename(argument)):
        errors.append(f"{argument}: not a file pinguard reads (YAML or JSON manifests, values, workflows; "
                      "templates of them such as *.tpl, *.yaml.tmpl, *.yaml.gotmpl, *.yaml.j2, *.yaml.template; "
                      "Dockerfiles and Containerfiles)")
        return False
    return True
