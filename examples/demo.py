"""The quick start's main flow, on stand-in images.

ECR Public cannot be reached from an offline machine, so this starts a
throwaway docker-registry on loopback with TLS and bearer-token auth (the flow
ECR Public uses), pushes small stand-in images with DLC-style tags, and points
pinguard at it with `--mirror public.ecr.aws=...`. Names stay canonical; the
digests printed are the stand-ins', not AWS's.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testing.registry import start_registry
from testing.seed import REPOSITORY, repush_moving, seed_dlc

IMAGE = f"public.ecr.aws/{REPOSITORY}"


def _pinguard(*args: str, expect: int = 0) -> None:
    print(f"\n$ pinguard {' '.join(args)}", flush=True)
    status = subprocess.run([sys.executable, "-m", "pinguard", *args], check=False).returncode
    if status != expect:
        raise SystemExit(f"pinguard {args[0]} exited {status}, expected {expect}")


def main() -> int:
    example = Path(__file__).resolve().parent / "dlc"  # the repository's training/ comes along
    with tempfile.TemporaryDirectory(prefix="pinguard-demo-") as workdir, \
            start_registry(Path(workdir) / "registry", tls=True, token_auth=True) as registry:
        seed_dlc(registry.pusher())
        print(f"Stand-in registry for public.ecr.aws at {registry.url} (TLS, bearer tokens).")
        print("Its images are small STAND-INS with DLC-style tags: their digests are not AWS's.")
        print("pinguard paces it as ECR Public: 1 request/s, its anonymous quota.")
        flags = ("--mirror", f"public.ecr.aws={registry.url}", "--ca-file", str(registry.ca_file))
        tree = Path(workdir) / "example"
        shutil.copytree(example, tree)  # the bundled example stays as written
        shutil.copytree(example.parent.parent / "training", tree / "training")  # the FSDP job and its manifests
        os.chdir(tree)
        os.environ["PINGUARD_CACHE_DIR"] = str(Path(workdir) / "cache")  # a throwaway cache, like the registry

        _pinguard("scan")
        _pinguard("lock", *flags)
        print("\n$ cat pinguard.lock")
        print(Path("pinguard.lock").read_text(), end="")
        _pinguard("pin", "--dry-run", expect=1)
        _pinguard("check", "--policy", "aws-dlc", expect=1)  # not pinned yet: the lint says so
        _pinguard("pin")
        _pinguard("pin", "--dry-run")  # nothing left to pin
        _pinguard("check", "--policy", "aws-dlc")  # pinned and locked: only warnings about moving tags
        _pinguard("run", "training/rayjob.yaml", "--local")  # the gate, then the tiny model on local Ray

        print("\nA security rebuild re-points the moving tag train-ml-cuda-v1.1 (stand-in v1.1.3);")
        print("the pinned files and the lock still name the digest that was verified:")
        repush_moving(registry.pusher())
        _pinguard("verify", *flags)
        _pinguard("update", "--dry-run", *flags, expect=1)
        _pinguard("update", *flags)
        _pinguard("check", "--policy", "aws-dlc")
        os.chdir(example)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
