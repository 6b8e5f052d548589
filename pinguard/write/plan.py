"""Pin planning: the new text of every file whose references the lock pins to another digest.

Only the characters of each reference change (see `pinguard.write.edits`); nothing is
written here: `pin` and `update` commit the plan, `run` renders a manifest with it.
The files of a chart Helm judged are planned by `pinguard.helm.pinning`, which keeps
only the edits a render confirms.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pinguard.lock.lockfile import Lock, locked_key
from pinguard.read.paths import Scan, ScannedFile
from pinguard.sources.base import Found
from pinguard.write.edits import Edit, apply, pin_edit

if TYPE_CHECKING:  # Helm is imported when a chart is to be pinned (`plan_chart`), not for every pin
    from pinguard.helm.judge import JudgedChart
    from pinguard.kustomize.judge import Built


class Plan(NamedTuple):
    changes: list[tuple[ScannedFile, str]]  # the new text of every file that changes
    missing: list[Found]  # references the lock does not know
    refused: list[tuple[Found, str]]  # references a chart cannot carry a digest for, and why


def plan_pins(result: Scan, lock: Lock) -> Plan:
    changes: list[tuple[ScannedFile, str]] = []
    missing: list[Found] = []
    refused: list[tuple[Found, str]] = []
    charts: dict[int, tuple[JudgedChart, list[tuple[Found, str]]]] = {}
    builds: dict[int, tuple[Built, list[tuple[Found, str]]]] = {}  # kustomizations, pinned by `plan_build`
    by_path: dict[Path, ScannedFile] = {}
    for scanned in result.files:
        chart = scanned.chart
        built = scanned.kustomization
        judged = chart is not None and chart.judges(scanned.file.path)
        edits: list[Edit] = []
        for found in scanned.found:
            key = locked_key(found.reference) if found.reference else None
            if key is None or found.reference is None:
                continue
            entry = lock.get(*key)
            if entry is None:
                missing.append(found)
            elif found.reference.digest == entry.digest:
                continue
            elif chart is not None and chart.failure is not None:
                refused.append((found, chart.failure))
            elif chart is not None and judged:
                charts.setdefault(id(chart), (chart, []))[1].append((found, entry.digest))
                by_path[scanned.file.path.resolve()] = scanned
            elif built is not None and built.judges(scanned.file.path) and (source := built.of(found)) is not None:
                builds.setdefault(id(source), (source, []))[1].append((found, entry.digest))
            else:
                edits.append(pin_edit(found, entry.digest))
        if edits:
            changes.append((scanned, apply(scanned.file.text, edits)))
    for chart, wanted in charts.values():
        from pinguard.helm.pinning import plan_chart

        chart_plan = plan_chart(chart, wanted)
        changes.extend((by_path[path], text) for path, text in chart_plan.texts.items())
        refused.extend(chart_plan.refused)
    if builds:
        from pinguard.kustomize.pinning import plan_build

        every = {scanned.file.path.resolve(): scanned for scanned in result.files}
        edited: dict[Path, list[Edit]] = {}
        for source, wanted_pins in builds.values():
            build_plan = plan_build(source, wanted_pins)
            for path, file_edits in build_plan.edits.items():
                edited.setdefault(path, []).extend(file_edits)
            refused.extend(build_plan.refused)
        changes.extend((every[path], apply(every[path].file.text, file_edits)) for path, file_edits in edited.items())
    return Plan(changes, missing, refused)


def repin(result: Scan, moved: Lock) -> list[tuple[ScannedFile, str]]:
    """The new text of every file pinning a name:tag of `moved`: the plan restricted to those pins.

    References without a digest, and pins of other names, are left alone (`pin`'s work, not `update`'s).
    """
    pinned = Scan([
        ScannedFile(scanned.file, scanned.kind, [
            found for found in scanned.found
            if found.reference is not None and found.reference.digest is not None
            and locked_key(found.reference) in moved.entries
        ], chart=scanned.chart, kustomization=scanned.kustomization)
        for scanned in result.files
    ])
    return plan_pins(pinned, moved).changes
