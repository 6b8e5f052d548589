"""Pin planning: the new text of every file whose references the lock pins to another digest.

Only the characters of each reference change (see `pinguard.write.edits`); nothing is
written here: `pin` and `update` commit the plan, `run` renders a manifest with it.
The files of a chart Helm judged are planned by `pinguard.helm.pinning`, which keeps
only the edits a render confirms. A chart's values read without Helm (`Found.pin_needs_helm`) are
never planned: a write there would be a guess at what the chart renders (a tag the chart compares,
a registry another values file sets), so planning one is refused whole (`refuse_without_helm`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pinguard.errors import PinguardError
from pinguard.lock.actions import ActionEntry
from pinguard.lock.lockfile import Lock
from pinguard.reference import locked_key
from pinguard.resolve.actions import ActionKey
from pinguard.scan.paths import Scan, ScannedFile
from pinguard.sources.base import ActionUse, Found
from pinguard.write.edits import Edit, action_pin_edits, apply, pin_edit

if TYPE_CHECKING:  # Helm is imported when a chart is to be pinned (`plan_chart`), not for every pin
    from pinguard.helm.judge import JudgedChart
    from pinguard.kustomize.judge import Built


NEEDS_HELM = "pinning a chart's values needs helm: install it or pass `--helm PATH`"


class Plan(NamedTuple):
    changes: list[tuple[ScannedFile, str]]  # the new text of every file that changes
    missing: list[Found]  # references the lock does not know
    refused: list[tuple[Found, str]]  # references a chart cannot carry a digest for, and why
    missing_actions: list[ActionUse]  # the `uses:` the lock holds no entry for


def plan_pins(result: Scan, lock: Lock, entry_for: Callable[[ActionUse], ActionEntry | None] | None = None) -> Plan:
    """The plan pinning every reference to its locked digest, and every `uses:` to its entry's commit (the entry
    `entry_for` gives, else the lock's); a PinguardError, and no plan, when it would write into a chart's values read
    without Helm."""
    refuse_without_helm(chart_writes(result, lock))
    changes: list[tuple[ScannedFile, str]] = []
    missing: list[Found] = []
    missing_actions: list[ActionUse] = []
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
        edits.extend(_action_edits(scanned.actions, entry_for or lock.actions.entry_for, missing_actions))
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
    return Plan(changes, missing, refused, missing_actions)


def _action_edits(uses: Iterable[ActionUse], entry_for: Callable[[ActionUse], ActionEntry | None],
                  missing: list[ActionUse]) -> list[Edit]:
    """The edits pinning each remote `uses:` to the commit of its entry (`entry_for`), the version in its comment;
    a use without an entry is added to `missing`."""
    edits: list[Edit] = []
    for use in uses:
        if use.action is None:
            continue
        entry = entry_for(use)
        if entry is None:
            missing.append(use)
        else:
            edits.extend(action_pin_edits(use, entry.commit, entry.version))
    return edits


def pinning_writes(found: Found, lock: Lock) -> bool:
    """Whether pinning to `lock` writes `found`, now or once it is locked: a reference without the digest its entry
    holds, or with none and no entry yet. A digest the lock does not know (`not-locked`) no pin replaces."""
    key = locked_key(found.reference) if found.reference is not None else None
    if key is None or found.reference is None:
        return False
    entry = lock.get(*key)
    return found.reference.digest != entry.digest if entry is not None else found.reference.digest is None


def chart_writes(result: Scan, lock: Lock) -> list[Found]:
    """The references of charts read without Helm that pinning to `lock` would write."""
    return [found for found in result.found if found.pin_needs_helm and pinning_writes(found, lock)]


def refuse_without_helm(blocked: list[Found]) -> None:
    """A PinguardError naming each of `blocked`, references of charts read without Helm that a command would write."""
    if blocked:
        raise PinguardError(f"nothing written: {NEEDS_HELM}", details=[
            f"{found.path}:{found.line}:{found.column}: {found.reference} is a chart's value: only Helm's render "
            "tells what writing it does" for found in blocked])


def repin(result: Scan, moved: Lock, lock: Lock | None = None,
          moved_actions: Mapping[ActionKey, ActionEntry] | None = None) -> list[tuple[ScannedFile, str]]:
    """The new text of every file pinning a name:tag of `moved`, or a commit of an entry of `lock` that
    `moved_actions` moves forward (by the entry's key): the plan restricted to those pins.

    References without a digest, `uses:` at a tag or branch, and pins of other names are left alone (`pin`'s work,
    not `update`'s).
    """
    actions = moved_actions or {}

    def moved_entry(use: ActionUse) -> ActionEntry | None:
        entry = lock.actions.entry_for(use) if lock is not None else None
        return actions.get(entry.key) if entry is not None else None

    pinned = Scan([
        ScannedFile(scanned.file, scanned.kind, [
            found for found in scanned.found
            if found.reference is not None and found.reference.digest is not None
            and locked_key(found.reference) in moved.entries
        ], chart=scanned.chart, kustomization=scanned.kustomization, actions=tuple(
            use for use in scanned.actions
            if use.action is not None and use.action.pinned and moved_entry(use) is not None))
        for scanned in result.files
    ])
    return plan_pins(pinned, moved, moved_entry).changes
