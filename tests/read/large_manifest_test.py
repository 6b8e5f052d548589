"""Memory of `scan` and `check` on one manifest of many documents: a few times the file, whatever its size.

Each document is composed, searched, checked and dropped in turn (`yamlnodes.each_document`), so what
stays is the text and a lean record for each reference; holding every document's nodes at once took
fifty times the file.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.policy.lint import lint
from pinguard.policy.load import load, preset
from pinguard.scan.paths import scan_paths
from testing.costs import peak_memory

# One Pod; every tenth writes a key twice, which `duplicate-key` (a rule reading whole documents) reports.
POD = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: pod-{n}
  labels: {{app: web-{n}, tier: "{tier}"{twice}}}
spec:
  containers:
  - name: main
    image: {registry}team/app-{app}:v1.{tier}
    args: ["--port", "8080"]
"""
REGISTRIES = ("", "ghcr.io/", "quay.io/", "registry.example.com:5000/")
MOST = 10  # peak memory over the file's size
GROWTH = 1.25  # how much the ratio may grow from the smaller file to the larger: a fixed cost shrinks, nothing grows


def _manifest(path: Path, size: int) -> int:
    """Pods until `size` characters; how many."""
    pods, written, parts = 0, 0, []
    while written < size:
        twice = ", app: again" if pods % 10 == 0 else ""
        part = POD.format(n=pods, tier=pods % 7, app=pods % 40, registry=REGISTRIES[pods % 4], twice=twice)
        parts.append(part)
        written += len(part)
        pods += 1
    path.write_text("".join(parts))
    return pods


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    _manifest(tmp_path / "warm.yaml", 2_000)  # the modules a first scan imports, imported before anything is measured
    scan_paths(["warm.yaml"])
    return tmp_path


def test_scan_and_check_of_a_large_manifest_hold_a_few_times_the_file(folder: Path) -> None:
    policy = load([preset("default")])
    ratios: dict[str, list[float]] = {"scan": [], "check": []}
    for name, size in (("small.yaml", 300_000), ("large.yaml", 1_200_000)):
        pods = _manifest(folder / name, size)
        scanned, scan_peak = peak_memory(lambda: scan_paths([name]))  # noqa: B023 (called at once)
        linted, check_peak = peak_memory(lambda: lint([name], policy, folder / "pinguard.lock"))  # noqa: B023
        assert scanned.errors == [] and len(scanned.found) == pods
        rules = [finding.rule for finding in linted.findings]
        # Every document was still read whole by the rules that read documents, and every reference judged.
        assert rules.count("duplicate-key") == (pods + 9) // 10 and rules.count("not-locked") == pods
        file_size = (folder / name).stat().st_size
        ratios["scan"].append(scan_peak / file_size)
        ratios["check"].append(check_peak / file_size)
    for command, (small, large) in ratios.items():
        assert max(small, large) < MOST, f"{command}: {small:.1f}x, {large:.1f}x the file"
        assert large < GROWTH * small, f"{command}: {small:.1f}x the file, then {large:.1f}x at four times the size"
