"""`pinguard run MANIFEST`: launch a Ray job only against the locked image, and confirm what its pods ran.

The manifest passes `check` under the policy it is given (by default the `aws-dlc` preset) or nothing is
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

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pinguard.admission.export import render as render_admission
from pinguard.admission.objects import Source
from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.commands.options import DEFAULT_WATCH, Options
from pinguard.errors import PinguardError
from pinguard.launch.gate import Gated, gate
from pinguard.launch.render import render
from pinguard.policy.model import Policy
from pinguard.report.formats import FORMATS

if TYPE_CHECKING:
    from pinguard.launch.cluster import JobSubmitter


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("manifest", metavar="MANIFEST", help="a RayJob or RayCluster manifest")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="print the object that would be submitted")
    mode.add_argument("--local", action="store_true",
                      help="run the entrypoint on a local Ray instance (CPU, tiny model); no image is enforced")
    parser.add_argument("--namespace", metavar="NS",
                        help="the namespace (default: the manifest's, else the context's)")
    flags.policy(parser, _POLICY)
    parser.add_argument("--watch-timeout", type=float, default=DEFAULT_WATCH, metavar="S",
                        help=f"give up watching after S seconds (default {DEFAULT_WATCH:g}); the job is left running")
    parser.add_argument("--admission", action="store_true",
                        help="first apply the lock as a ValidatingAdmissionPolicy bound to the job's namespace, so "
                             "the cluster admits only locked images there (with --dry-run: print it)")
    flags.lockfile(parser)
    flags.quiet(parser)


def _run(context: Context) -> int:
    args = context.args
    return run(args.manifest, context.options, context.policy(), dry_run=args.dry_run, local=args.local,
               namespace=args.namespace, watch_timeout=args.watch_timeout, admission=args.admission)


_POLICY = PolicyDefault("aws-dlc", project=False)  # the gate of what runs: the preset, not the project's
COMMAND = Command("run", "launch a RayJob or RayCluster only against the locked image; confirm what its pods run",
                  _options, _run, _POLICY)


def run(manifest: str, options: Options, policy: Policy, *, dry_run: bool = False, local: bool = False,
        namespace: str | None = None, watch_timeout: float = DEFAULT_WATCH, poll: float = 2.0,
        submitter: JobSubmitter | None = None, admission: bool = False) -> int:
    if watch_timeout <= 0:
        raise PinguardError("--watch-timeout must be more than 0 seconds")
    if admission and local:
        raise PinguardError("--admission makes a cluster enforce the lock; --local runs nothing there")
    gated = gate(manifest, options.lockfile, policy)
    if not gated.passed:
        FORMATS["text"](gated.findings, options.stdout)
        options.report.say(f"{manifest}: refused: nothing was launched; fix the errors above")
        return 1
    if gated.findings and not options.quiet:
        FORMATS["text"](gated.findings, options.stderr)  # warnings; stdout may be the rendered YAML
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

        return run_local(job, Path(manifest), options.env, options.report.say)
    from pinguard.launch.cluster import launch  # the kubernetes client: only when a cluster is reached

    return launch(job, gated.lock, options.env, progress=_progress(options), say=options.report.say,
                  timeout=watch_timeout, poll=poll, submitter=submitter, admission=source, sidecars=policy.sidecars)


def _progress(options: Options) -> Callable[[str], None]:
    """How a launch goes, a line on stdout as each thing happens (a watch lasts minutes); nothing under -q."""
    if options.quiet:
        return lambda _line: None

    def progress(line: str) -> None:
        print(line, file=options.stdout, flush=True)

    return progress


def _source(gated: Gated, options: Options) -> Source:
    return Source(gated.lock, options.lockfile.as_posix(), gated.lock_sha256)
