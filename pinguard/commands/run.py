"""`pinguard run MANIFEST`: launch a Ray job only against the locked image, and confirm what its pods ran.

The manifest passes `check` (default policy: the `aws-dlc` preset) or nothing is
launched (exit 1, the findings printed). Then the RayJob or RayCluster is rendered with
every image at its locked digest and marked for the in-pod guard; `--dry-run` prints
it, `--local` runs its entrypoint here on CPU, and otherwise it is submitted and its
pods watched until the job ends: 0 when it succeeded and every pod ran its locked
digest, 1 when a pod runs another (the job is deleted), the job failed, or time ran out.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pinguard.errors import PinguardError
from pinguard.launch.gate import gate
from pinguard.launch.render import render
from pinguard.options import Options

if TYPE_CHECKING:
    from pinguard.launch.cluster import JobSubmitter


def run(manifest: str, options: Options, *, policies: Sequence[Path] = (), dry_run: bool = False,
        local: bool = False, namespace: str | None = None, timeout: float = 3600.0, poll: float = 2.0,
        submitter: JobSubmitter | None = None) -> int:
    if timeout <= 0:
        raise PinguardError("--timeout must be more than 0 seconds")
    gated = gate(manifest, options, policies)
    if gated is None:
        return 1
    job = render(gated, namespace)
    if dry_run:
        options.stdout.write(job.yaml())
        return 0
    if local:
        from pinguard.launch.local import run_local

        return run_local(job, Path(manifest), options)
    from pinguard.launch.cluster import launch  # the kubernetes client: only when a cluster is reached

    return launch(job, gated.lock, options, timeout=timeout, poll=poll, submitter=submitter)
