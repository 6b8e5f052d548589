"""Checks that run inside the training job: which transport NCCL chose, and which image this pod runs.

The standard library only: training workers import this module (train.py does) in an
image where pinguard's dependencies may be missing, and it may travel as a lone file
next to train.py (the `pinguard-train` ConfigMap).

Both failures they catch are silent otherwise: NCCL falls back to TCP sockets when EFA
is not set up and the job still succeeds, slower; a node may run another image than
the locked one (a mutating webhook, a pre-loaded image) and nothing says so.
"""
from __future__ import annotations

import glob
import json
import os
import re
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
EFA, SOCKETS, UNKNOWN = "efa", "sockets", "unknown"

# NCCL_DEBUG=INFO lines. aws-ofi-nccl writes "Selected Provider is efa" in some versions, "provider" in others.
_EFA = re.compile(r"Selected provider is efa\b|Using network AWS Libfabric|via NET/AWS Libfabric", re.IGNORECASE)
# NCCL's own socket transport, or libfabric's TCP providers behind the OFI plugin: both are the TCP fallback.
_SOCKETS = re.compile(r"NET/Socket|Using network Socket|Selected provider is (?:sockets|tcp)\b", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"%[hp]")  # NCCL_DEBUG_FILE's host name and process id


class GuardError(RuntimeError):
    """A guard could not run, or found the job in a state it must not train in; the text says which."""


class TransportFallback(GuardError):
    """NCCL talks over TCP sockets where EFA was required."""


class ImageMismatch(GuardError):
    """This pod runs another image digest than the locked one."""


def classify_nccl(text: str) -> str:
    """The transport NCCL debug output shows: "efa", "sockets" or "unknown".

    Sockets win over EFA: one rank that fell back slows every collective it takes part in.
    """
    if _SOCKETS.search(text):
        return SOCKETS
    if _EFA.search(text):
        return EFA
    return UNKNOWN


def check_nccl_transport(require_efa: bool, allow_tcp_fallback: bool, env: Mapping[str, str] = os.environ) -> str:
    """Classify the NCCL debug file(s) named by NCCL_DEBUG_FILE; raise TransportFallback on a forbidden fallback.

    NCCL writes a file per process where the name holds `%h` (host) and `%p` (pid), so
    every file the pattern can name is read. No file (NCCL_DEBUG unset, no collective
    yet) gives "unknown": there is nothing to judge.
    """
    pattern = env.get("NCCL_DEBUG_FILE", "")
    names = sorted(glob.glob("*".join(glob.escape(part) for part in _PLACEHOLDER.split(pattern)))) if pattern else []
    transport = classify_nccl("".join(Path(name).read_text(encoding="utf-8", errors="replace") for name in names))
    if require_efa and transport == SOCKETS and not allow_tcp_fallback:
        raise TransportFallback(
            f"NCCL uses TCP sockets, not EFA (read {', '.join(names)}): check FI_PROVIDER=efa, NCCL_NET_PLUGIN=ofi "
            "and the vpc.amazonaws.com/efa resource of the worker pods, or pass --allow_tcp_fallback to train slower"
        )
    return transport


def image_id_digest(image_id: str) -> str | None:
    """The digest in a container status's imageID (`docker-pullable://repo@sha256:...`, `repo@sha256:...`).

    None when the runtime reports no repository digest (a bare image ID: built or loaded
    on the node, never pulled by digest), so what runs cannot be matched to a lock.
    """
    _, at, digest = image_id.rpartition("@")
    return digest if at and ":" in digest else None


def check_own_image(env: Mapping[str, str] = os.environ, *, api_url: str | None = None,
                    token_file: Path = SERVICE_ACCOUNT / "token", ca_file: Path | None = SERVICE_ACCOUNT / "ca.crt",
                    timeout: float = 10.0) -> str | None:
    """The digest this pod's container runs, read from its own pod through the API; None outside a pod.

    Only inside a pod that `pinguard run` rendered (KUBERNETES_SERVICE_HOST and
    PINGUARD_EXPECTED_DIGEST set). The container is the one PINGUARD_CONTAINER names;
    without it, every container whose image is pinned to the expected digest. Raises
    ImageMismatch when one of them reports another digest, GuardError when the pod
    cannot be read (the service account needs `get` on pods: training/rbac.yaml).
    """
    expected = env.get("PINGUARD_EXPECTED_DIGEST")
    host = env.get("KUBERNETES_SERVICE_HOST")
    if not expected or not host:
        return None
    if api_url is None:
        api_url = f"https://{f'[{host}]' if ':' in host else host}:{env.get('KUBERNETES_SERVICE_PORT', '443')}"
    namespace = env.get("POD_NAMESPACE") or token_file.with_name("namespace").read_text(encoding="utf-8").strip()
    name = env.get("POD_NAME") or env.get("HOSTNAME")
    if not name:
        raise GuardError("neither POD_NAME nor HOSTNAME is set: this pod cannot be found")
    pod = _get_pod(api_url, namespace, name, token_file, ca_file, timeout)
    statuses = pod.get("status", {}).get("containerStatuses") or []
    wanted = env.get("PINGUARD_CONTAINER")
    if wanted:
        chosen = [s for s in statuses if s.get("name") == wanted]
    else:
        pinned = {c.get("name") for c in pod.get("spec", {}).get("containers", [])
                  if str(c.get("image", "")).endswith("@" + expected)}
        chosen = [s for s in statuses if s.get("name") in pinned]
    if not chosen:
        which = f"container {wanted}" if wanted else f"container pinned to {expected}"
        raise ImageMismatch(f"pod {namespace}/{name} reports no {which}")
    for status in chosen:
        image_id = str(status.get("imageID", ""))
        if image_id_digest(image_id) != expected:
            raise ImageMismatch(f"pod {namespace}/{name}, container {status.get('name')}: image "
                                f"{status.get('image')} should run {expected}, but runs {image_id or '(no imageID)'}")
    return expected


def _get_pod(api_url: str, namespace: str, name: str, token_file: Path, ca_file: Path | None,
             timeout: float) -> dict[str, Any]:
    url = f"{api_url.rstrip('/')}/api/v1/namespaces/{namespace}/pods/{name}"
    headers = {"Authorization": f"Bearer {token_file.read_text(encoding='utf-8').strip()}",
               "Accept": "application/json"}
    context = ssl.create_default_context(cafile=ca_file) if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout,
                                    context=context) as response:
            pod: dict[str, Any] = json.load(response)
    except urllib.error.HTTPError as exc:
        raise GuardError(f"cannot read pod {namespace}/{name}: HTTP {exc.code} {exc.reason} (the service account "
                         "needs `get` on pods: training/rbac.yaml)") from None
    except (OSError, ValueError) as exc:
        raise GuardError(f"cannot read pod {namespace}/{name} from {api_url}: {exc}") from None
    return pod
