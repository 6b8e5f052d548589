"""`pinguard run --local`: the manifest's entrypoint on a local Ray instance, CPU and a tiny model.

For trying the training program without a cluster. The entrypoint runs through the shell
(as Ray's job driver runs it) from the repository root, the folder holding `training/`,
with `python` being the interpreter pinguard runs on, where ray and torch are installed.
Paths inside the container are mapped to the repository by the annotation
`pinguard.dev/local-paths: CONTAINER_PATH=LOCAL_PATH[,...]` (local paths relative to the root).
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from pinguard.errors import PinguardError
from pinguard.launch.render import Job

LOCAL_PATHS_ANNOTATION = "pinguard.dev/local-paths"
# Appended, so that they win: the training program reads its flags with argparse, where the last one counts.
OVERRIDES = " --model_id tiny --num_workers 2 --cpu --steps 5"


def command(job: Job, storage: str) -> str:
    """The entrypoint with container paths mapped to the repository and the local overrides appended.

    Every local run gets its own `storage` folder: a run name reused in shared storage would resume
    an earlier run (already at its last step) instead of training.
    """
    entrypoint = job.entrypoint()
    for pair in filter(None, job.annotations.get(LOCAL_PATHS_ANNOTATION, "").split(",")):
        inside, equals, local = (part.strip() for part in pair.partition("="))
        if not equals or not inside or not local:
            raise PinguardError(f"{job.kind} {job.name}: annotation {LOCAL_PATHS_ANNOTATION}: expected "
                                f"CONTAINER_PATH=LOCAL_PATH, got {pair!r}")
        entrypoint = re.sub(rf"(?<![\w./-]){re.escape(inside.rstrip('/'))}(?=/|\s|$)", local, entrypoint)
    return f"{entrypoint}{OVERRIDES} --storage_path {shlex.quote(storage)}"


def run_local(job: Job, manifest: Path, env: Mapping[str, str], say: Callable[[str], None]) -> int:
    """Run the job's entrypoint locally, saying so by `say` (the command's stderr, said before the entrypoint
    writes there); its exit status."""
    folder = manifest.resolve().parent
    root = next((p for p in (folder, *folder.parents) if (p / "training").is_dir()), None)
    if root is None:
        raise PinguardError(f"{manifest}: no folder above it holds training/, the repository root --local runs from")
    storage = tempfile.mkdtemp(prefix="pinguard-local-")  # kept: the run's checkpoints and metrics are there
    line = command(job, storage)
    say("--local: no container image is enforced locally (nor the runtime_env applied): the entrypoint "
        f"runs with this Python, {sys.executable}")
    say(f"running in {root}: {line}")
    path = os.pathsep.join(filter(None, (str(Path(sys.executable).parent), env.get("PATH"))))
    return subprocess.run(line, shell=True, cwd=root, env={**env, "PATH": path}, check=False).returncode
