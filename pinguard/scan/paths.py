"""Find every image reference under some paths: what `scan`, `lock`, `pin` and `check` share.

A scan is handed what it reads with (`ScanSettings`): what the sources are told, the Helm and kustomize
that judge charts and kustomizations as they deploy them, and the environment those tools run in, the
one the command line was handed. All it asks of Helm it asks of one `HelmReader` a scan (pinguard/helm).
"""
from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pinguard.errors import PinguardError
from pinguard.helm.reader import HelmReader
from pinguard.helm.settings import HelmSettings
from pinguard.kustomize.settings import NAMES, KustomizeSettings
from pinguard.read.files import TextFile, UnreadableFile, walk
from pinguard.sources import kinds
from pinguard.sources.base import DEFAULT_SETTINGS, ActionUse, Found, SourceError, SourceSettings

if TYPE_CHECKING:  # Helm's judging is imported when a file needs it (pinguard/helm/reader.py), kustomize's here
    from pinguard.helm.judge import JudgedChart
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
    actions: tuple[ActionUse, ...] = ()  # every `uses:` of a workflow or action.yml, in the order written


@dataclass
class Scan:
    files: list[ScannedFile] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "path:line:column: message", one per bad file

    @property
    def found(self) -> list[Found]:
        return [item for scanned in self.files for item in scanned.found]

    @property
    def actions(self) -> list[ActionUse]:
        return [use for scanned in self.files for use in scanned.actions]


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
    """The paths named (the current folder when none) under which `result`, their scan, found no image reference
    and no action a workflow uses."""
    holding = {Path(os.path.abspath(scanned.file.path)) for scanned in result.files if scanned.found or scanned.actions}
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
    walked = list(walk(named, Path.cwd()))  # every kustomization of the scan is known before any is built
    try:
        helm = HelmReader.for_scan(settings.helm, settings.tools_env, walked)
    except PinguardError as exc:  # the helm named cannot run: every chart would be misread
        errors.append(str(exc))
        return
    kustomized = _kustomize_judge(walked, settings)
    for path in walked:
        if not kinds.may_hold_images(path.name):
            continue
        try:
            file = TextFile.read(path)
        except UnreadableFile as exc:
            errors.append(f"{path}:1:1: {exc}")
            continue
        try:
            charted = helm.in_chart(path)
        except PinguardError as exc:  # the helm named cannot run: every chart would be misread
            errors.append(f"{path}:1:1: {exc}")
            return
        kind = kinds.detect(path.as_posix(), file.text, chart=charted.folder, named_values=charted.named)
        rendered = charted.rendered()
        if rendered is not None:  # its text would only be read to be set aside
            yield ScannedFile(file, kind, rendered, charted.chart)
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
        try:
            searched = (helm.values(path, file.text, settings.sources) if kind == kinds.HELM
                        else kinds.find(path.as_posix(), file.text, kind, settings.sources))
        except SourceError as exc:
            errors.append(f"{path}:{exc.line}:{exc.column}: {exc}")
            continue
        found = charted.beside(searched.found, kind)
        if built is not None:
            from pinguard.kustomize.judge import failure_notice as build_failure

            found = [*build_failure(built, path), *found]
        yield ScannedFile(file, kind, found, charted.chart, built, searched.actions)


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
