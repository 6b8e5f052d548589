"""The quick start's main flow, on stand-in images.

ECR Public cannot be reached from an offline machine, so this starts a
throwaway docker-registry on loopback with TLS and bearer-token auth (the flow
ECR Public uses), pushes small stand-in images with DLC-style tags, and points
pinguard at it with `--mirror public.ecr.aws=...`. Names stay canonical; the
digests printed are the stand-ins', not AWS's.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testing.registry import start_registry
from testing.seed import REPOSITORY, repush_moving, seed_dlc

IMAGE = f"public.ecr.aws/{REPOSITORY}"


def _pinguard(*args: str) -> None:
    print(f"\n$ pinguard {' '.join(args)}", flush=True)
    subprocess.run([sys.executable, "-m", "pinguard", *args], check=True)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="pinguard-demo-") as workdir, \
            start_registry(Path(workdir), tls=True, token_auth=True) as registry:
        seed_dlc(registry.pusher())
        print(f"Stand-in registry for public.ecr.aws at {registry.url} (TLS, bearer tokens).")
        print("Its images are small STAND-INS with DLC-style tags: their digests are not AWS's.")
        flags = ("--mirror", f"public.ecr.aws={registry.url}", "--ca-file", str(registry.ca_file))
        _pinguard("resolve", *flags, f"{IMAGE}:train-ml-cuda-v1.1", f"{IMAGE}:train-ml-cuda-v1.1.0",
                  f"{IMAGE}:multi-v1")

        print("\nA security rebuild re-points the moving tag train-ml-cuda-v1.1 (stand-in v1.1.3)...")
        repush_moving(registry.pusher())
        _pinguard("resolve", *flags, f"{IMAGE}:train-ml-cuda-v1.1")
        _pinguard("resolve", *flags, "--format", "json", f"{IMAGE}:train-ml-cuda-v1.1")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
