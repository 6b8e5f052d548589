"""Host memory per rank while training/train.py builds its FSDP2 model on CPU: the whole model first, then sharded
(the way before), against sharded initialisation (`build_sharded_model`).

Each way runs in fresh processes, one per rank (gloo, CPU), and each rank reports its peak resident set (VmHWM)
once the model is built, what importing torch and starting the process group had already cost, and the build's
time. A named architecture (default qwen2.5-1.5b) gets random weights; a local Hugging Face folder is loaded, and
then a third way is measured: rank 0 reading each whole tensor and scattering it to the shards (the loader not
taken). `--save DIR` first writes the named architecture with random weights to DIR in bf16 (as Hugging Face
publishes Qwen2.5), then measures loading that folder. Goal: sharded initialisation below half of the way before.
Run: `.venv/bin/python benchmarks/init_memory.py [--model_id M] [--world_size N] [--save DIR]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from safetensors import safe_open
from torch.distributed.tensor import DTensor, distribute_tensor
from transformers import AutoModelForCausalLM

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training import train

GOAL = 0.5  # sharded initialisation's peak over the way before's, per rank
CPU = torch.device("cpu")


def _load_by_broadcast(model: torch.nn.Module, folder: Path) -> None:
    """The loader not taken: rank 0 reads each whole tensor and scatters its rows to the ranks' shards."""
    where = train.safetensors_index(folder)
    rank = dist.get_rank()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            assert isinstance(parameter, DTensor)
            if rank == 0:
                with safe_open(folder / where[name], framework="pt") as weights:
                    whole = weights.get_tensor(name).to(parameter.dtype)
            else:
                whole = torch.empty(parameter.shape, dtype=parameter.dtype)  # only its shape is read
            shard = distribute_tensor(whole, parameter.device_mesh, parameter.placements, src_data_rank=0)
            parameter.to_local().copy_(shard.to_local())
            parameter._is_hf_initialized = True  # type: ignore[attr-defined]


def _whole_then_sharded(model_id: str) -> torch.nn.Module:
    torch.manual_seed(0)
    return train.shard_model(train.build_model(model_id), device_type="cpu", mixed_precision=False)


def _sharded(model_id: str) -> torch.nn.Module:
    return train.build_sharded_model(model_id, device=CPU)


def _broadcast(model_id: str) -> torch.nn.Module:
    train.load_shards = _load_by_broadcast  # this process only builds this once
    return train.build_sharded_model(model_id, device=CPU)


WAYS: dict[str, tuple[str, Callable[[str], torch.nn.Module]]] = {
    "whole": ("whole, then sharded", _whole_then_sharded),
    "sharded": ("sharded init", _sharded),
    "broadcast": ("rank-0 scatter", _broadcast),
}


def _rank(rank: int, world_size: int, folder: str, way: str, model_id: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{folder}/store-{way}", rank=rank, world_size=world_size)
    try:
        before = train.peak_rss_bytes()  # importing torch and starting the group
        began = time.perf_counter()
        model = WAYS[way][1](model_id)
        dist.barrier()
        result = {
            "peak": train.peak_rss_bytes(),
            "before": before,
            "seconds": time.perf_counter() - began,
            # a checksum of this rank's shards, which the ways loading one folder must agree on
            "sum": sum(float(p.to_local().detach().double().sum()) for p in model.parameters()),
        }
        Path(folder, f"{way}-{rank}.json").write_text(json.dumps(result), encoding="utf-8")
    finally:
        dist.destroy_process_group()


def _save_random(model_id: str, folder: Path) -> None:
    torch.manual_seed(0)
    train.build_model(model_id).to(torch.bfloat16).save_pretrained(folder)


def _gb(size: float) -> str:
    return f"{size / 1e9:.2f} GB"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model_id", default="qwen2.5-1.5b", help="as train.py's (default %(default)s)")
    parser.add_argument("--world_size", type=int, default=2, help="ranks, one process each (default %(default)s)")
    parser.add_argument("--save", type=Path, help="write the named architecture's random weights here first, and load")
    args = parser.parse_args(argv)
    model_id = args.model_id
    if args.save is not None:
        _save_random(model_id, args.save)
        model_id = str(args.save.resolve())
    ways = ["whole", "sharded", "broadcast"] if Path(model_id).is_dir() else ["whole", "sharded"]

    threads = max(1, (os.cpu_count() or 1) // args.world_size)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    os.environ["OMP_NUM_THREADS"] = str(threads)
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for way in ways:
            mp.spawn(_rank, args=(args.world_size, folder, way, model_id), nprocs=args.world_size, join=True)
            results[way] = [
                json.loads(Path(folder, f"{way}-{rank}.json").read_text(encoding="utf-8"))
                for rank in range(args.world_size)
            ]

    with torch.device("meta"):
        parameters = train.count_parameters(AutoModelForCausalLM.from_config(train.model_config(model_id)))
    weights = "loaded from a folder" if Path(model_id).is_dir() else "random weights"
    print(f"{args.model_id} ({weights}): {parameters:,} parameters, {_gb(parameters * 4)} in fp32; "
          f"world size {args.world_size} on CPU (gloo), {threads} thread(s) per rank")
    print(f"{'peak resident set':<24}" + "".join(f"{WAYS[way][0]:>22}" for way in ways) + f"{'sharded/before':>16}")
    ratios = []
    for rank in range(args.world_size):
        peaks = [results[way][rank]["peak"] for way in ways]
        ratios.append(peaks[1] / peaks[0])
        print(f"{f'rank {rank}':<24}" + "".join(f"{_gb(peak):>22}" for peak in peaks) + f"{ratios[-1]:>16.2f}")
    print(f"{'imports and group, r0':<24}" + "".join(f"{_gb(results[way][0]['before']):>22}" for way in ways))
    print(f"{'build time, rank 0':<24}" + "".join(f"{results[way][0]['seconds']:>20.1f} s" for way in ways))
    if Path(model_id).is_dir():
        sums = {way: sum(result["sum"] for result in results[way]) for way in ways}
        print(f"same weights every way: {'yes' if len(set(sums.values())) == 1 else f'no: {sums}'}")
    print(f"goal: sharded init below {GOAL} of the way before on every rank: "
          f"{'met' if max(ratios) < GOAL else 'missed'}")
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
