"""The binary that builds kustomizations: kubectl (`kubectl kustomize`) or kustomize (`kustomize build`).

A build never reaches the network: remote resources are refused before building (`graph.py`), and
the build runs with git allowed no transport and HTTP sent to a proxy that answers nothing, so a
remote base that slipped past is an error, never a download. Files load only from inside each
kustomization's own folder (kustomize's default `LoadRestrictionsRootOnly`, said out loud).
"""
from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pinguard.errors import PinguardError
from pinguard.helm.binary import RenderFailed, bounded_run
from pinguard.untrusted_text import shown
from pinguard.write.kept import binary_answer

# `kubectl version --client` prints "Kustomize Version: v5.7.1"; `kustomize version` prints "v5.7.1" (older ones
# "{Version:kustomize/v4.5.7 ...}").
_KUSTOMIZE_VERSION = re.compile(r"(?m)(?:Kustomize Version: |^|kustomize/)(v\d+\.\d+\.\d+)")
_OFFLINE = {
    "GIT_ALLOW_PROTOCOL": "none",  # git clones nothing: no transport is named "none"
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",  # the discard port: nothing answers
    "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "NO_PROXY": "", "no_proxy": "",
}


class BuildFailed(RenderFailed):
    """kustomize refused the kustomization: the message is its first line of complaint."""


@dataclass(frozen=True)
class Kustomize:
    path: str
    version: str  # the kustomize inside, as it reports it, e.g. v5.7.1
    kubectl: bool  # `kubectl kustomize DIR`; else `kustomize build DIR`

    def build(self, folder: Path, env: Mapping[str, str]) -> str:
        """What the kustomization in `folder` builds to, offline."""
        command = [self.path, "kustomize"] if self.kubectl else [self.path, "build"]
        command += [str(folder), "--load-restrictor", "LoadRestrictionsRootOnly"]
        try:
            return bounded_run(command, {**env, **_OFFLINE})
        except RenderFailed as exc:
            raise BuildFailed(str(exc)) from None


def locate(explicit: str | None, env: Mapping[str, str], cache_dir: Path | None = None) -> Kustomize | None:
    """The binary named (`--kustomize`, the policy's `kustomize.binary`), else kubectl on PATH, else kustomize
    on PATH, else None. One named that does not run, or reports no kustomize version, is an error.

    The version a binary reports is kept in `cache_dir` under its path, size and time of change: asking
    costs a start of kubectl, as much as a build."""
    search = env.get("PATH", os.defpath)
    path = shutil.which(explicit, path=search) if explicit and os.sep not in explicit else explicit
    if explicit and (path is None or not os.access(path, os.X_OK)):
        raise PinguardError(f"kustomize: {explicit!r} is not an executable file")
    chosen = path or next((found for name in ("kubectl", "kustomize") if (found := shutil.which(name, path=search))),
                          None)
    if chosen is None:
        return None
    kubectl = Path(chosen).name.startswith("kubectl")
    version = binary_answer(cache_dir / "kustomize" / "versions" if cache_dir is not None else None, chosen,
                            lambda: _asked(chosen, kubectl, env), _KUSTOMIZE_VERSION.fullmatch)
    return Kustomize(chosen, version, kubectl)


def _asked(path: str, kubectl: bool, env: Mapping[str, str]) -> str:
    try:
        answer = bounded_run([path, "version", "--client"] if kubectl else [path, "version"], dict(env))
    except RenderFailed as exc:
        raise PinguardError(f"kustomize: {path} does not answer `version`: {exc}") from None
    matched = _KUSTOMIZE_VERSION.search(answer)
    if matched is None:
        raise PinguardError(f"kustomize: {path} reports no kustomize version ({shown(answer.strip())!r})")
    return matched.group(1)
