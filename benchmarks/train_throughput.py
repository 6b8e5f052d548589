"""Training throughput and model FLOPs utilisation of training/train.py's step, in one process on this machine.

The model is built, sharded and stepped by train.py's own functions: `build_sharded_model` (FSDP2 over a world of
one, materialised straight on the device: bf16 mixed precision with fp32 master weights on a GPU and NCCL, fp32 and
gloo on CPU, exactly as in training), AdamW, gradient clipping, random tokens. The first --warmup steps (compilation,
allocator growth) are not timed; then --steps steps are, with the device synchronised before and after, and losses
read only at the end so that nothing waits inside the timed loop. MFU counts 6 FLOPs per parameter and token plus
attention (12 x layers x hidden x seq_len) against the device's dense bf16 peak: 989 TFLOPS on an H200, a documented
placeholder on CPU. Meant for qwen2.5-1.5b at seq_len 2048 on a GPU (goal: MFU >= 0.45). Random tokens carry nothing
to learn; --repeat_batch steps on one batch throughout, so that the loss must fall.
Run: `.venv/bin/python benchmarks/train_throughput.py [--model_id M] [--seq_len N] [--batch_size B] [--steps S]
[--warmup W] [--compile] [--activation_checkpointing] [--attention A] [--fused_adamw] [--repeat_batch]
[--learning_rate LR] [--cpu] [--peak_tflops T]`.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training import train

MFU_GOAL = 0.45  # qwen2.5-1.5b, seq_len 2048, bf16 on an H200


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main(argv: Sequence[str] | None = None) -> int:
    gpu = torch.cuda.is_available()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--model_id", default=None,
                        help="as train.py's (default: qwen2.5-1.5b on a GPU, tiny on CPU)")
    parser.add_argument("--seq_len", type=int, default=2048)
    parser.add_argument("--batch_size", type=int, default=4, help="sequences per step (default %(default)s)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first (default %(default)s)")
    parser.add_argument("--compile", action="store_true", help="torch.compile each decoder layer")
    parser.add_argument("--activation_checkpointing", action="store_true")
    parser.add_argument("--attention", default=None,
                        help="Hugging Face's attention: sdpa, flash_attention_2, eager, ... (default: its own, sdpa)")
    parser.add_argument("--fused_adamw", action="store_true", help="AdamW's fused kernel instead of its default")
    parser.add_argument("--repeat_batch", action="store_true", help="step on one batch throughout: the loss must fall")
    parser.add_argument("--learning_rate", type=float, default=1e-5, help="AdamW's (default %(default)s)")
    parser.add_argument("--cpu", action="store_true", help="stay on CPU where a GPU exists")
    parser.add_argument("--peak_tflops", type=float, default=None,
                        help="the device's peak for MFU (default: dense bf16 of the GPU; the CPU placeholder)")
    args = parser.parse_args(argv)
    device = torch.device("cuda", 0) if gpu and not args.cpu else torch.device("cpu")
    model_id = args.model_id or ("qwen2.5-1.5b" if device.type == "cuda" else "tiny")

    if device.type == "cuda":
        torch.cuda.set_device(device)
    # A process group of one, in memory: FSDP2 needs one, and no port is opened.
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        began = time.perf_counter()
        model = train.build_sharded_model(
            model_id,
            device=device,
            attention=args.attention,
            activation_checkpointing=args.activation_checkpointing,
            compile=args.compile,
        )
        _synchronize(device)
        init_seconds, init_host_peak = time.perf_counter() - began, train.peak_rss_bytes()
        per_token = train.flops_per_token(model, args.seq_len)
        parameters = train.count_parameters(model)
        vocab_size = model.config.vocab_size
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, fused=args.fused_adamw or None)
        batches = [
            train.synthetic_batch(1 if args.repeat_batch else step, rank=0, seed=0, batch_size=args.batch_size,
                                  seq_len=args.seq_len, vocab_size=vocab_size).to(device)
            for step in range(1, args.warmup + args.steps + 1)
        ]
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        for batch in batches[: args.warmup]:
            train.train_step(model, optimizer, None, batch, max_grad_norm=1.0)
        _synchronize(device)

        losses, step_ends = [], []
        began = time.perf_counter()
        for batch in batches[args.warmup:]:
            loss, _ = train.train_step(model, optimizer, None, batch, max_grad_norm=1.0)
            losses.append(loss)
            if device.type == "cpu":  # a CPU step ends when it returns; on a GPU this would add a wait
                step_ends.append(time.perf_counter())
        _synchronize(device)
        seconds = time.perf_counter() - began
    finally:
        dist.destroy_process_group()

    tokens_per_s = args.steps * args.batch_size * args.seq_len / seconds
    peak = train.peak_tflops(device, args.peak_tflops)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    precision = "bf16 compute, fp32 master weights" if device.type == "cuda" else "fp32"
    options = [("compiled", args.compile), ("activation checkpointing", args.activation_checkpointing),
               ("fused AdamW", args.fused_adamw), ("one batch repeated", args.repeat_batch)]
    attention = model.config._attn_implementation
    print(f"{model_id}: {parameters:,} parameters, seq_len {args.seq_len}, batch {args.batch_size}, {precision}; "
          f"FSDP2 world size 1 on {name}; attention {attention}; AdamW lr {args.learning_rate:g}"
          + "".join(f", {option}" for option, chosen in options if chosen))
    print(f"sharded initialisation: {init_seconds:.1f} s, host peak resident set {init_host_peak / 1e9:.2f} GB")
    print(f"{per_token:,.0f} FLOPs per token (6 x parameters + 12 x layers x hidden x seq_len)")
    spread = ""
    if len(step_ends) > 1:
        durations = [b - a for a, b in itertools.pairwise([began, *step_ends])]
        spread = f" (median {statistics.median(durations):.4f}, range {min(durations):.4f}-{max(durations):.4f})"
    print(f"{args.steps} timed steps after {args.warmup} untimed: {seconds / args.steps:.4f} s/step{spread}")
    print(f"throughput {tokens_per_s:,.0f} tokens/s")
    if peak:
        mfu = per_token * tokens_per_s / (peak * 1e12)
        basis = "placeholder, see training/train.py" if device.type == "cpu" and args.peak_tflops is None else "peak"
        print(f"MFU {mfu:.4f} of {peak:g} TFLOPS ({basis})")
        if device.type == "cuda" and model_id == "qwen2.5-1.5b" and args.seq_len == 2048:
            print(f"goal MFU >= {MFU_GOAL}: {'met' if mfu >= MFU_GOAL else 'missed'}")
    else:
        print(f"MFU: unknown peak for {name}; pass --peak_tflops")
    print(f"peak memory {train.peak_memory_gb(device):.2f} GB")
    marks = sorted({0, len(losses) // 4, len(losses) // 2, 3 * len(losses) // 4, len(losses) - 1})
    print("loss " + ", ".join(f"{losses[i].item():.4f} (step {args.warmup + i + 1})" for i in marks))
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
