"""The helm binary: found, asked its version once, and run with bounded output and time."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pinguard.errors import PinguardError
from pinguard.helm.settings import ClusterContext
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


def _keep_start(stream: IO[bytes], kept: list[bytes]) -> None:
    """Read `stream` to its end (a writer blocked on a full pipe never finishes), keeping its first bytes."""
    size = 0
    while chunk := stream.read(65536):
        if size < _COMPLAINT_LIMIT:
            kept.append(chunk[:_COMPLAINT_LIMIT - size])
        size += len(chunk)


def bounded_run(command: list[str], env: Mapping[str, str] | None) -> str:
    """Standard output of `command`; killed past the time or the size limit (its error output is kept short)."""
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                   env=dict(env) if env is not None else None)
    except OSError as exc:
        raise RenderFailed(f"cannot run {command[0]}: {exc.strerror or exc}") from None
    assert process.stdout is not None and process.stderr is not None
    timer = threading.Timer(_TIMEOUT, process.kill)
    complaint: list[bytes] = []
    reader = threading.Thread(target=_keep_start, args=(process.stderr, complaint), daemon=True)
    timer.start()
    reader.start()
    try:
        out = process.stdout.read(_OUTPUT_LIMIT + 1)
        if len(out) > _OUTPUT_LIMIT:
            process.kill()
        status = process.wait()
    finally:
        timer.cancel()
        reader.join()
        process.stdout.close()
        process.stderr.close()
    if len(out) > _OUTPUT_LIMIT:
        raise RenderFailed(f"rendered more than {_OUTPUT_LIMIT >> 20} MiB")
    if status < 0:
        raise RenderFailed(f"no answer within {_TIMEOUT:.0f} seconds")
    if status != 0:
        lines = [line for line in b"".join(complaint).decode("utf-8", "replace").splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("Error:")]  # what went wrong; the rest is advice
        raise RenderFailed(shown((errors or lines or [f"exit status {status}"])[0]))
    return out.decode("utf-8", "replace")
