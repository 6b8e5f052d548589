"""The helm binary: found, asked its version once, and run with bounded output and time."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pinguard.errors import PinguardError
from pinguard.helm.settings import ClusterContext
from pinguard.read.tool import CannotStart, TooMuchOutput, TooSlow, run_tool
from pinguard.untrusted_text import shown
from pinguard.write.kept import binary_answer

_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)")
_OUTPUT_LIMIT = 64 * 1024 * 1024  # bytes of rendered manifests; a chart past this is refused
_TIMEOUT = 120.0  # seconds one render may take
_COMPLAINT_LIMIT = 64 * 1024  # bytes of error output kept
RELEASE = "release-name"  # what `helm template` calls a release it is not given a name for


class RenderFailed(PinguardError):
    """`helm template` refused the chart with these values: the message is its last line of complaint."""


@dataclass(frozen=True)
class Helm:
    path: str
    version: str  # as helm reports it, e.g. v4.1.4

    def template(self, chart: Path, values: Sequence[str], settings: Sequence[tuple[str, str]] = (),
                 env: Mapping[str, str] | None = None, context: ClusterContext | None = None) -> str:
        """The chart rendered over the texts of `values` (in order, later ones winning) and `--set` pairs,
        answering as the cluster of `context` does."""
        with tempfile.TemporaryDirectory(prefix="pinguard-helm-") as folder:
            release = context.release if context is not None and context.release else RELEASE
            command = [self.path, "template", release, str(chart), *(context.arguments() if context else ())]
            for index, text in enumerate(values):
                path = Path(folder, f"values-{index}.yaml")
                path.write_text(text, encoding="utf-8")
                command += ["--values", str(path)]
            for key, value in settings:
                command += ["--set", f"{key}={value}"]
            return bounded_run(command, env)


def locate(explicit: str | None, env: Mapping[str, str], cache_dir: Path | None = None) -> Helm | None:
    """The helm named (`--helm`, the policy's `helm.binary`), else the one on PATH, else None.

    One named that does not run, or is not Helm 3 or 4, is an error: a typo must not read charts another way.
    Its version is kept in `cache_dir` (write/kept.py `binary_answer`).
    """
    path = shutil.which(explicit, path=env.get("PATH")) if explicit and os.sep not in explicit else explicit
    if explicit and (path is None or not os.access(path, os.X_OK)):
        raise PinguardError(f"helm: {explicit!r} is not an executable file")
    if path is None:
        path = shutil.which("helm", path=env.get("PATH", os.defpath))
        if path is None:
            return None
    found = path
    version = binary_answer(cache_dir / "helm" / "versions" if cache_dir is not None else None, path,
                            lambda: _asked(found, env), _VERSION.match)
    matched = _VERSION.match(version)
    if matched is None or matched.group(1) not in ("3", "4"):
        raise PinguardError(f"helm: {path} reports version {shown(version)!r}; pinguard works with Helm 3 and 4")
    return Helm(path, version.partition("+")[0])


def _asked(path: str, env: Mapping[str, str]) -> str:
    try:
        return bounded_run([path, "version", "--short"], env).strip()
    except RenderFailed as exc:
        raise PinguardError(f"helm: {path} does not answer `helm version`: {exc}") from None


def bounded_run(command: list[str], env: Mapping[str, str] | None) -> str:
    """Standard output of `command`; killed past the time or the size limit (its error output is kept short)."""
    try:
        done = run_tool(command, env, timeout=_TIMEOUT, max_out=_OUTPUT_LIMIT, err_kept=_COMPLAINT_LIMIT)
    except CannotStart as exc:
        raise RenderFailed(f"cannot run {command[0]}: {exc}") from None
    except TooMuchOutput:
        raise RenderFailed(f"rendered more than {_OUTPUT_LIMIT >> 20} MiB") from None
    except TooSlow:
        raise RenderFailed(f"no answer within {_TIMEOUT:.0f} seconds") from None
    if done.status != 0:
        lines = [line for line in done.err.decode("utf-8", "replace").splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("Error:")]  # what went wrong; the rest is advice
        raise RenderFailed(shown((errors or lines or [f"exit status {done.status}"])[0]))
    return done.out.decode("utf-8", "replace")
