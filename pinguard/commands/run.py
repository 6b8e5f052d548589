"""`pinguard run MANIFEST`: launch a Ray job only against the locked image, and confirm what its pods ran.

The manifest passes `check` (default policy: the `aws-dlc` preset) or nothing is
launched (exit 1, the findings printed). Then the RayJob or RayCluster is rendered with
every image at its locked digest and marked for the in-pod guard; `--dry-run` prints
it, `--local` runs its entrypoint here on CPU, and otherwise it is submitted and its
pods watched until the job ends: 0 when it succeeded and every pod ran its locked
digest, 1 when a pod runs another (the job is deleted), the job failed, or time ran out.

With `--admission` the lock is first applied as a ValidatingAdmissionPolicy (the params
ConfigMap, the policy, a binding to the job's namespace; see `pinguard.admission.vap`),
so the API server itself refuses any pod there whose image the lock does not hold;
`--dry-run` prints those objects before the job.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pinguard.admission import Source
from pinguard.admission.export import render as render_admission
from pinguard.errors import PinguardError
from pinguard.launch.gate import Gated, gate
from pinguard.launch.render import render
from pinguard.options import Options

if TYPE_CHECKING:
    from pinguard.launch.cluster import JobSubmitter


def run(manifest: str, options: Options, *, policies: Sequence[Path] = (), dry_run: bool = False,
        local: bool = False, namespace: str | None = None, timeout: float = 3600.0, poll: float = 2.0,
        submitter: JobSubmitter | None = None, admission: bool = False) -> int:
    if timeout <= 0:
        raise PinguardError("--timeout must be more than 0 seconds")
    if admission and local:
        raise PinguardError("--admission makes a cluster enforce the lock; --local runs nothing there")
    gated = gate(manifest, options, policies)
    if gated is None:
        return 1
    job = render(gated, namespace)
    source = _source(gated, options) if admission else None
    if dry_run:
        if source is not None:
            if job.namespace is None:
                raise PinguardError(f"{manifest}: --admission binds the job's namespace: name it (--namespace NS) "
                                    "to see what would be applied")
            options.stdout.write(render_admission(source, "vap", (job.namespace,), "deny") + "---\n")
        options.stdout.write(job.yaml())
        return 0
    if local:
        from pinguard.launch.local import run_local

        return run_local(job, Path(manifest), options)
    from pinguard.launch.cluster import launch  # the kubernetes client: only when a cluster is reached

    return launch(job, gated.lock, options, timeout=timeout, poll=poll, submitter=submitter, admission=source,
                  sidecars=gated.sidecars)


def _source(gated: Gated, options: Options) -> Source:
    return Source(gated.lock, options.lockfile.as_posix(), gated.lock_sha256)
