"""Fine-tune a causal language model with Ray Train (TorchTrainer, Train V2) and FSDP2.

    python training/train.py --model_id tiny --cpu --num_workers 2 --steps 20 --storage_path /tmp/runs
    ray job submit -- python training/train.py --model_id /models/qwen2.5-1.5b --steps 1000 --seq_len 2048

Inside a Ray cluster (`ray job submit`, a RayJob) it joins that cluster, elsewhere it starts a local Ray instance.
The flags of the AWS sample this replaces (aws-samples/sample-aws-deep-learning-containers, training/ray-train) keep
their meaning: --model_id --steps --seq_len --batch_size --learning_rate --num_workers.

Nothing is downloaded: --model_id names a local Hugging Face folder or an architecture built with random weights.
Each rank allocates and fills only its own shards of the model (build_sharded_model), never the whole of it.
Running again with the same --storage_path and --run_name resumes from that run's latest checkpoint (Ray Train V2
restores the run's checkpoint list from storage); --steps counts every step of the run, those before a resume included.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import logging
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import ray
import ray.train
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import transformers
from ray.train.torch import TorchConfig, TorchTrainer, get_device
from safetensors import safe_open
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor, Shard
from torch.optim.lr_scheduler import LambdaLR
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, PretrainedConfig, PreTrainedModel, Qwen2Config

# Named architectures, built from their config with random weights. qwen2.5-1.5b is Qwen/Qwen2.5-1.5B's published
# shape (its config.json); tiny is the same family small enough for tests on CPU.
ARCHITECTURES: dict[str, dict[str, Any]] = {
    "qwen2.5-1.5b": {
        "hidden_size": 1536,
        "intermediate_size": 8960,
        "num_hidden_layers": 28,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
        "rope_theta": 1e6,
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True,
        "max_position_embeddings": 32768,
    },
    "tiny": {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 1024,
        "rope_theta": 1e6,
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True,
        "max_position_embeddings": 4096,
    },
}
# The AWS sample's default --model_id, so its command line runs unchanged (with random weights: nothing is fetched).
ALIASES = {"qwen/qwen2.5-1.5b": "qwen2.5-1.5b"}
KNOWN = ", ".join(ARCHITECTURES)

# Dense bf16 tensor-core peaks (no sparsity), TFLOPS per GPU, matched on the device name; the first match wins.
GPU_PEAK_TFLOPS: tuple[tuple[str, float], ...] = (
    (r"\bH200\b", 989.0),
    (r"\bH100\b.*\bPCIe\b", 756.0),
    (r"\bH100\b", 989.0),
    (r"\bA100\b", 312.0),
    (r"\bL4\b", 121.0),
)
# CPU placeholder: 0.1 TFLOPS for each thread torch uses, about one x86 core's fp32 FMA peak (8 AVX2 lanes x 2 FMA
# units x 2 flops x 3 GHz). CPUs have no agreed peak, so CPU MFU compares runs on one machine and nothing else.
CPU_TFLOPS_PER_THREAD = 0.1

TRAIN_STATE = "train_state.json"
DEFAULT_RUN_NAME = "ray-train-fsdp-llm"
# Workers log rather than print: Ray Train forwards their root logger to the driver once, their print twice.
log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Everything a run needs; the command line's flags, and what each Ray worker receives."""

    model_id: str = "qwen2.5-1.5b"
    steps: int = 5
    seq_len: int = 128
    batch_size: int = 1
    learning_rate: float = 2e-5
    num_workers: int = 0
    cpu: bool = False
    storage_path: str | None = None
    run_name: str = DEFAULT_RUN_NAME
    data: str | None = None
    tokenizer: str | None = None
    warmup_steps: int = 0
    max_grad_norm: float = 1.0
    seed: int = 0
    checkpoint_every: int = 50
    metrics_file: str | None = None
    peak_tflops: float | None = None
    activation_checkpointing: bool = False
    compile: bool = False
    require_efa: bool = False
    allow_tcp_fallback: bool = False


# --- model -----------------------------------------------------------------------------------------------------------


def architecture(model_id: str) -> str | None:
    """The named architecture `model_id` stands for, if any."""
    name = ALIASES.get(model_id.lower(), model_id.lower())
    return name if name in ARCHITECTURES else None


def model_config(name_or_path: str) -> PretrainedConfig:
    """A local Hugging Face folder's config, or a named architecture's, set up for training."""
    if Path(name_or_path).is_dir():
        config: PretrainedConfig = AutoConfig.from_pretrained(name_or_path, local_files_only=True)
    else:
        name = architecture(name_or_path)
        if name is None:
            raise ValueError(f"--model_id {name_or_path!r} is neither a local folder nor one of: {KNOWN}")
        config = Qwen2Config(**ARCHITECTURES[name])
    config.use_cache = False  # training never reuses keys and values
    return config


def build_model(name_or_path: str) -> PreTrainedModel:
    """The whole model on this host in fp32: a local folder's weights, or a named architecture's random ones.

    Training builds the sharded model instead (build_sharded_model); this is what that one is checked and measured
    against. Seed torch first for the same random weights each time.
    """
    config = model_config(name_or_path)
    if Path(name_or_path).is_dir():
        model: PreTrainedModel = AutoModelForCausalLM.from_pretrained(
            name_or_path, config=config, dtype=torch.float32, local_files_only=True
        )
    else:
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    return model


def build_sharded_model(
    name_or_path: str,
    *,
    device: torch.device,
    seed: int = 0,
    attention: str | None = None,
    activation_checkpointing: bool = False,
    compile: bool = False,
) -> PreTrainedModel:
    """The model sharded by shard_model over all ranks, no rank ever holding more than its own shards.

    It is built on the meta device (shapes without storage) and sharded there; then each rank allocates its shards on
    `device` and fills them: from the folder's safetensors (load_shards), else with Hugging Face's random
    initialisation, which also computes the buffers (rotary frequencies) that `to_empty` leaves as uninitialised
    memory. `attention` picks Hugging Face's implementation ("sdpa", "flash_attention_2", "eager"; default: its own).
    """
    if int(transformers.__version__.split(".")[0]) < 5:
        # What this relies on is transformers 5's: no initialisation on the meta device, and init_weights that skips
        # parameters marked as loaded and recomputes the rotary buffers.
        raise RuntimeError(f"building the sharded model needs transformers 5 or later, not {transformers.__version__}")
    with torch.device("meta"):
        model: PreTrainedModel = AutoModelForCausalLM.from_config(
            model_config(name_or_path), dtype=torch.float32, attn_implementation=attention
        )
    shard_model(
        model,
        device_type=device.type,
        mixed_precision=device.type == "cuda",
        activation_checkpointing=activation_checkpointing,
        compile=compile,
    )
    model.to_empty(device=device)
    if Path(name_or_path).is_dir():
        load_shards(model, Path(name_or_path))
    # On a GPU DTensor draws each shard at its own offset of one generator seeded alike on every rank; on CPU every
    # rank draws its shards from its own generator, which must then differ or all shards come out alike.
    torch.manual_seed(seed + dist.get_rank() if device.type == "cpu" else seed)
    model.init_weights()  # skips what load_shards marked as loaded
    return model


def safetensors_index(folder: Path) -> dict[str, str]:
    """Tensor name to file name: model.safetensors.index.json's map where the weights are split, else one file's."""
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        return dict(json.loads(index.read_text(encoding="utf-8"))["weight_map"])
    single = folder / "model.safetensors"
    if not single.is_file():
        raise ValueError(f"{folder} has no model.safetensors or model.safetensors.index.json")
    with safe_open(single, framework="pt") as weights:
        return dict.fromkeys(weights.keys(), single.name)


def local_rows(parameter: torch.Tensor) -> tuple[torch.Tensor, slice]:
    """This rank's part of a parameter, and which rows of the whole it holds (all of them when not sharded)."""
    if not isinstance(parameter, DTensor):
        return parameter, slice(None)
    if parameter.placements != (Shard(0),):
        raise ValueError(f"only parameters sharded by rows load, not {parameter.placements}")
    # FSDP2 splits rows as torch.chunk does: ceil(rows / ranks) each, so the last ranks may hold fewer or none.
    rows = parameter.shape[0]
    per_rank = -(-rows // parameter.device_mesh.size())
    start = min(parameter.device_mesh.get_local_rank() * per_rank, rows)
    local = parameter.to_local()
    return local, slice(start, start + local.shape[0])


def load_shards(model: torch.nn.Module, folder: Path) -> None:
    """Copy into each parameter's local shard its rows of the folder's safetensors, cast to the parameter's dtype.

    Every rank reads its own rows only, so no process holds a whole tensor. The files are memory-mapped, and a page
    read stays in the process's resident set while its file is open: each file is opened for one tensor at a time.
    Each loaded parameter is marked as Hugging Face's loader marks it (`_is_hf_initialized`), so that init_weights
    leaves it alone.
    """
    where = safetensors_index(folder)
    missing = [name for name, _ in model.named_parameters() if name not in where]
    if missing:
        named = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
        raise ValueError(f"{folder}'s safetensors lack {len(missing)} of the model's parameters: {named}")
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            local, rows = local_rows(parameter)
            with safe_open(folder / where[name], framework="pt") as weights:
                local.copy_(weights.get_slice(name)[rows])
            parameter._is_hf_initialized = True


def decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The repeated blocks, found by the class names Hugging Face lists as not to be split across devices."""
    names = set(getattr(model, "_no_split_modules", None) or ())
    layers = [module for module in model.modules() if type(module).__name__ in names]
    if not layers:
        raise ValueError(f"{type(model).__name__} names no decoder layer class (_no_split_modules) to shard by")
    return layers


def shard_model(
    model: PreTrainedModel,
    *,
    device_type: str,
    mixed_precision: bool,
    activation_checkpointing: bool = False,
    compile: bool = False,
) -> PreTrainedModel:
    """FSDP2 over all ranks of the default process group: each decoder layer, then the root (embeddings, head).

    Sharding per layer lets FSDP2 gather one layer's parameters at a time and overlap that with compute. The
    parameters move to the mesh's device as they are sharded, so a GPU never holds the whole fp32 model; parameters on
    the meta device stay there, for build_sharded_model to allocate and fill.
    """
    mesh = init_device_mesh(device_type, (dist.get_world_size(),))
    # bf16 compute with fp32 gradient reduction and fp32 master weights; CPUs keep fp32 throughout.
    policy = (
        MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        if mixed_precision
        else MixedPrecisionPolicy()
    )
    if activation_checkpointing:
        # Non-reentrant checkpointing is the variant that works under FSDP2's hooks; transformers 5 renamed the method.
        options = {"use_reentrant": False}
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable(activation_checkpointing_kwargs=options)
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=options)
    for layer in decoder_layers(model):
        if compile:
            layer.compile()  # in place, so state-dict keys (and checkpoints) stay those of the uncompiled model
        fully_shard(layer, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    return model


def count_parameters(model: torch.nn.Module) -> int:
    """Distinct parameters (tied embeddings once); DTensors count their global size."""
    return sum(parameter.numel() for parameter in model.parameters())


def flops_per_token(model: PreTrainedModel, seq_len: int) -> float:
    """Training FLOPs per token: 6 per parameter (forward, backward) plus attention, 12 x layers x hidden x seq_len."""
    config = model.config
    return 6.0 * count_parameters(model) + 12.0 * float(config.num_hidden_layers * config.hidden_size) * seq_len


def peak_tflops(device: torch.device, override: float | None = None) -> float | None:
    """The device's dense bf16 peak (the CPU placeholder on CPU); None for a GPU this table does not know."""
    if override is not None:
        return override
    if device.type != "cuda":
        return CPU_TFLOPS_PER_THREAD * torch.get_num_threads()
    name = torch.cuda.get_device_name(device)
    return next((tflops for pattern, tflops in GPU_PEAK_TFLOPS if re.search(pattern, name)), None)


def peak_rss_bytes() -> int:
    """This process's peak resident set, from Linux's VmHWM. Not getrusage's ru_maxrss: a process started by fork and
    exec (torch.multiprocessing's spawn, for one) keeps there the peak of the process it was forked from."""
    status = Path("/proc/self/status").read_text(encoding="utf-8")
    return int(re.search(r"^VmHWM:\s+(\d+) kB$", status, re.MULTILINE)[1]) * 1024  # type: ignore[index]


def peak_memory_gb(device: torch.device) -> float:
    """CUDA's peak allocation on a GPU; on CPU the process's peak resident set."""
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 1e9
    return peak_rss_bytes() / 1e9


# --- optimisation ----------------------------------------------------------------------------------------------------


def lr_factor(index: int, *, warmup_steps: int, total_steps: int) -> float:
    """Multiplier of the learning rate for step `index + 1` (LambdaLR counts from 0).

    Linear warmup over `warmup_steps`, then cosine decay reaching 10% at the last step.
    """
    if index < warmup_steps:
        return (index + 1) / warmup_steps
    progress = min(1.0, (index - warmup_steps) / max(1, total_steps - warmup_steps - 1))
    return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))


def make_scheduler(optimizer: torch.optim.Optimizer, config: TrainConfig, *, done_steps: int = 0) -> LambdaLR:
    """The schedule as a function of the step alone: a resumed run continues it, with this run's --steps and rate."""
    for group in optimizer.param_groups:
        group["initial_lr"] = config.learning_rate
    schedule = partial(lr_factor, warmup_steps=config.warmup_steps, total_steps=config.steps)
    return LambdaLR(optimizer, schedule, last_epoch=done_steps - 1)


def train_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: LambdaLR | None,
    input_ids: torch.Tensor,
    *,
    max_grad_norm: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One optimizer step on a batch of token ids (the labels are the inputs; the model shifts them).

    Returns this rank's loss and the gradient norm over all shards before clipping, as tensors: reading them waits
    for the device, which is the caller's choice.
    """
    loss = model(input_ids=input_ids, labels=input_ids).loss
    loss.backward()
    # On FSDP2's DTensor parameters clip_grad_norm_ reduces the norm across shards and returns it as a DTensor.
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    grad_norm = norm.full_tensor() if isinstance(norm, DTensor) else norm
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if scheduler is not None:
        scheduler.step()
    return loss.detach(), grad_norm.detach()


def mean_over_ranks(value: torch.Tensor) -> float:
    """The mean over ranks (gloo has no AVG reduction, so SUM and divide)."""
    total = value.detach().clone().float()
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total.item() / dist.get_world_size()


# --- data ------------------------------------------------------------------------------------------------------------


def synthetic_batch(step: int, *, rank: int, seed: int, batch_size: int, seq_len: int, vocab_size: int) -> torch.Tensor:
    """Uniform random token ids, as in the AWS sample; distinct per rank and step, and the same after a resume."""
    generator = torch.Generator().manual_seed((seed * 1_000_003 + rank) * 1_000_003 + step)
    return torch.randint(0, vocab_size, (batch_size, seq_len), generator=generator)


def load_blocks(path: Path, tokenizer_dir: Path, *, seq_len: int, rank: int, world_size: int) -> torch.Tensor:
    """This rank's share of a JSON-lines file (every world_size-th line), tokenized and packed into seq_len blocks.

    Documents are joined with the tokenizer's end-of-sequence token; the last partial block is dropped.
    """
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir), local_files_only=True)
    ids: list[int] = []
    with path.open(encoding="utf-8") as lines:
        for index, line in enumerate(lines):
            if index % world_size != rank or not line.strip():
                continue
            ids.extend(tokenizer(json.loads(line)["text"], add_special_tokens=False)["input_ids"])
            if tokenizer.eos_token_id is not None:
                ids.append(tokenizer.eos_token_id)
    blocks = len(ids) // seq_len
    if blocks == 0:
        raise ValueError(f"{path}: rank {rank} of {world_size} has {len(ids)} tokens, less than one block of {seq_len}")
    return torch.tensor(ids[: blocks * seq_len], dtype=torch.long).view(blocks, seq_len)


def block_batch(blocks: torch.Tensor, step: int, batch_size: int) -> torch.Tensor:
    """The batch of step `step` (from 1): consecutive blocks, wrapping around, so a resumed run reads on from there."""
    rows = [((step - 1) * batch_size + i) % len(blocks) for i in range(batch_size)]
    return blocks[rows]


def batch_source(config: TrainConfig, *, rank: int, world_size: int, vocab_size: int) -> Callable[[int], torch.Tensor]:
    """A function from step number to this rank's batch (on CPU)."""
    if config.data is None:
        return partial(
            synthetic_batch,
            rank=rank,
            seed=config.seed,
            batch_size=config.batch_size,
            seq_len=config.seq_len,
            vocab_size=vocab_size,
        )
    if config.tokenizer is None:
        raise ValueError("--data needs --tokenizer")
    blocks = load_blocks(
        Path(config.data), Path(config.tokenizer), seq_len=config.seq_len, rank=rank, world_size=world_size
    )
    if int(blocks.max()) >= vocab_size:
        raise ValueError(f"the tokenizer yields id {int(blocks.max())}, beyond the model's vocabulary of {vocab_size}")
    return partial(block_batch, blocks, batch_size=config.batch_size)


# --- checkpoints -----------------------------------------------------------------------------------------------------


def save_checkpoint(
    directory: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, *, step: int, model_id: str
) -> None:
    """Write this rank's shards of model and optimizer (DCP); rank 0 adds DCP's metadata, the step and the model.

    Every rank may write to a folder of its own: the shard files are named by rank, and Ray Train merges the folders
    reported by all ranks into one checkpoint in storage.
    """
    model_state, optimizer_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=directory)
    if dist.get_rank() == 0:
        state = {"step": step, "model_id": model_id}
        (directory / TRAIN_STATE).write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")


def load_checkpoint(directory: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, *, model_id: str) -> int:
    """Restore model and optimizer from a checkpoint of save_checkpoint (any world size); return its step."""
    state = json.loads((directory / TRAIN_STATE).read_text(encoding="utf-8"))
    if state["model_id"] != model_id:
        raise ValueError(
            f"the run's checkpoint {directory} trains {state['model_id']!r}, not {model_id!r}: "
            "give another --run_name to start afresh"
        )
    model_state, optimizer_state = get_state_dict(model, optimizer)
    dcp.load({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=directory)  # fills them in place
    set_state_dict(model, optimizer, model_state_dict=model_state, optim_state_dict=optimizer_state)
    return int(state["step"])


# --- metrics ---------------------------------------------------------------------------------------------------------


def start_metrics_file(path: Path, after_step: int) -> None:
    """Keep the lines of steps up to `after_step` (a resume redoes the steps after its checkpoint), drop the rest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    kept: list[str] = []
    if after_step > 0 and path.exists():
        lines = path.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if json.loads(line)["step"] <= after_step]
    path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


def plot_metrics(path: Path) -> Path | None:
    """Loss and throughput per step, as a PNG beside the metrics file; None where matplotlib is not installed."""
    try:
        import matplotlib  # optional: not part of the train extra

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return None
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    steps = [row["step"] for row in rows]
    figure, (loss_axes, speed_axes) = pyplot.subplots(2, 1, sharex=True, figsize=(7, 6))
    loss_axes.plot(steps, [row["loss"] for row in rows])
    loss_axes.set_ylabel("loss")
    speed_axes.plot(steps, [row["tokens_per_s"] for row in rows])
    speed_axes.set_ylabel("tokens/s")
    speed_axes.set_xlabel("step")
    figure.tight_layout()
    image = path.with_suffix(".png")
    figure.savefig(image)
    pyplot.close(figure)
    return image


# --- guards ----------------------------------------------------------------------------------------------------------


def load_guards() -> ModuleType | None:
    """pinguard's in-job checks: from pinguard where the image has it, else guards.py shipped beside this file."""
    try:
        from pinguard.launch import guards
    except ImportError:
        beside = Path(__file__).with_name("guards.py")
        spec = importlib.util.spec_from_file_location("guards", beside) if beside.is_file() else None
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return guards


def check_nccl_transport(config: TrainConfig, device: torch.device, guards: ModuleType | None) -> None:
    """Fail when NCCL fell back to sockets: that gives no error, only a slower job."""
    # NCCL names its transport only at INFO level. It reads these when it builds its first communicator, at the
    # first collective just below (Ray's process group creates none before), so defaults set here still count;
    # the pod's own settings win. One file per process: %h is the host, %p the process id.
    os.environ.setdefault("NCCL_DEBUG", "INFO")
    os.environ.setdefault("NCCL_DEBUG_FILE", "/tmp/nccl-debug.%h.%p.log")
    dist.all_reduce(torch.zeros(1, device=device))
    torch.cuda.synchronize(device)
    if guards is not None:
        transport = guards.check_nccl_transport(
            require_efa=config.require_efa, allow_tcp_fallback=config.allow_tcp_fallback
        )
        if dist.get_rank() == 0:
            log.info("NCCL transport: %s", transport)
    elif config.require_efa:
        raise RuntimeError("--require_efa needs pinguard.launch.guards to check NCCL's transport; pinguard is missing")


# --- the worker ------------------------------------------------------------------------------------------------------


def train_loop_per_worker(config_dict: dict[str, Any]) -> None:
    """What every Ray Train worker runs: guards, model, resume, then steps with metrics and checkpoints."""
    config = TrainConfig(**config_dict)
    context = ray.train.get_context()
    rank, world_size = context.get_world_rank(), context.get_world_size()
    device = get_device()

    guards = load_guards()
    if guards is None:
        if rank == 0:
            log.warning("pinguard is not installed here: the image and NCCL's transport are not checked")
    elif (digest := guards.check_own_image()) is not None:  # None outside a pod
        log.info("this pod runs the locked image %s", digest)
    if dist.get_backend() == "nccl":
        check_nccl_transport(config, device, guards)

    model = build_sharded_model(
        config.model_id,
        device=device,
        seed=config.seed,
        activation_checkpointing=config.activation_checkpointing,
        compile=config.compile,
    )
    per_token = flops_per_token(model, config.seq_len)
    vocab_size = model.config.vocab_size
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)

    start = 0
    checkpoint = ray.train.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            start = load_checkpoint(Path(directory), model, optimizer, model_id=config.model_id)
    scheduler = make_scheduler(optimizer, config, done_steps=start)
    batch_at = batch_source(config, rank=rank, world_size=world_size, vocab_size=vocab_size)
    peak = peak_tflops(device, config.peak_tflops)
    metrics_file = Path(config.metrics_file) if config.metrics_file and rank == 0 else None
    if metrics_file is not None:
        start_metrics_file(metrics_file, start)
    if rank == 0:
        resumed = f", resuming after step {start}" if start else ""
        size = count_parameters(model)
        log.info("%s: %s parameters on %d x %s%s", config.model_id, f"{size:,}", world_size, device, resumed)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    tokens_per_step = config.batch_size * config.seq_len * world_size
    for step in range(start + 1, config.steps + 1):
        began = time.perf_counter()
        learning_rate = scheduler.get_last_lr()[0]
        loss, grad_norm = train_step(
            model, optimizer, scheduler, batch_at(step).to(device), max_grad_norm=config.max_grad_norm
        )
        mean_loss = mean_over_ranks(loss)  # also waits for every rank, so the time covers the slowest
        seconds = time.perf_counter() - began
        tokens_per_s = tokens_per_step / seconds
        metrics: dict[str, Any] = {
            "step": step,
            "loss": mean_loss,
            "learning_rate": learning_rate,
            "grad_norm": grad_norm.item(),
            "tokens_per_s": tokens_per_s,
            "mfu": per_token * tokens_per_s / (peak * 1e12 * world_size) if peak else None,
            "peak_memory_gb": peak_memory_gb(device),
            "step_time_s": seconds,
        }
        if metrics_file is not None:
            with metrics_file.open("a", encoding="utf-8") as out:
                out.write(json.dumps(metrics) + "\n")
        if rank == 0:
            mfu = f"{metrics['mfu']:.3f}" if peak else "n/a"
            log.info(
                f"step {step}/{config.steps} loss {mean_loss:.4f} lr {learning_rate:.2e} tokens/s {tokens_per_s:,.0f} "
                f"MFU {mfu} peak memory {metrics['peak_memory_gb']:.2f} GB"
            )
        if step == config.steps or (config.checkpoint_every and step % config.checkpoint_every == 0):
            with tempfile.TemporaryDirectory(prefix="checkpoint-") as directory:
                save_checkpoint(Path(directory), model, optimizer, step=step, model_id=config.model_id)
                ray.train.report(
                    metrics,
                    checkpoint=ray.train.Checkpoint.from_directory(directory),
                    checkpoint_dir_name=f"checkpoint_{step:06d}",
                )
        else:
            ray.train.report(metrics)

    if metrics_file is not None and (image := plot_metrics(metrics_file)) is not None:
        log.info("plot: %s", image)


# --- the driver ------------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> TrainConfig:
    defaults = TrainConfig()
    parser = argparse.ArgumentParser(description="Fine-tune a causal language model with Ray Train and FSDP2.")
    default = " (default: %(default)s)"

    def add(flag: str, text: str, **options: Any) -> None:
        if options.get("action") != "store_true":
            options["default"] = getattr(defaults, flag.removeprefix("--"))
        parser.add_argument(flag, help=text, **options)

    add("--model_id", "a local Hugging Face model folder (safetensors), or a named architecture with random weights: "
        f"{KNOWN}" + default)
    add("--steps", "optimizer steps of the whole run, resumed ones included" + default, type=int)
    add("--seq_len", "tokens per sequence" + default, type=int)
    add("--batch_size", "sequences per worker and step" + default, type=int)
    add("--learning_rate", "peak AdamW learning rate" + default, type=float)
    add("--num_workers", "Ray Train workers; 0: one per GPU in the cluster, or 2 with --cpu" + default, type=int)
    add("--cpu", "train on CPU with gloo even where GPUs exist", action="store_true")
    add("--storage_path", "where Ray Train keeps runs and checkpoints, shared storage on several nodes "
        "(default: ~/ray_results)")
    add("--run_name", "the run's folder in storage; an existing run is resumed" + default)
    add("--data", "a JSON-lines file with a `text` field (default: random tokens)")
    add("--tokenizer", "a local tokenizer folder, for --data")
    add("--warmup_steps", "steps of linear warmup before the cosine decay" + default, type=int)
    add("--max_grad_norm", "gradient clipping norm" + default, type=float)
    add("--seed", "seeds the initial weights and the random tokens" + default, type=int)
    add("--checkpoint_every", "steps between checkpoints, plus one after the last step; 0: only that one" + default,
        type=int)
    add("--metrics_file", "JSON lines of per-step metrics from rank 0 "
        "(default: metrics.jsonl in the run's folder, where storage is local)")
    add("--peak_tflops", "peak TFLOPS per worker for MFU (default: the GPU's dense bf16 peak, 989 on an H200; "
        f"on CPU a placeholder of {CPU_TFLOPS_PER_THREAD} per thread)", type=float)
    add("--activation_checkpointing", "recompute each layer's activations in backward", action="store_true")
    add("--compile", "torch.compile each decoder layer", action="store_true")
    add("--require_efa", "fail unless NCCL uses EFA (checked by pinguard's guards)", action="store_true")
    add("--allow_tcp_fallback", "let NCCL's fallback to sockets pass with a warning", action="store_true")
    args = parser.parse_args(argv)
    for name in ("steps", "seq_len", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    for name in ("num_workers", "warmup_steps", "checkpoint_every"):
        if getattr(args, name) < 0:
            parser.error(f"--{name} must not be negative")
    if (args.data is None) != (args.tokenizer is None):
        parser.error("--data and --tokenizer go together")
    if not Path(args.model_id).is_dir() and architecture(args.model_id) is None:
        parser.error(f"--model_id {args.model_id!r} is neither a local folder nor one of: {KNOWN}")
    return TrainConfig(**vars(args))


def resolve_paths(config: TrainConfig) -> TrainConfig:
    """Absolute paths (workers do not share the driver's folder) and the default storage and metrics file."""

    def absolute(path: str) -> str:
        return str(Path(path).expanduser().resolve())

    storage = config.storage_path or absolute("~/ray_results")
    local = "://" not in storage
    if local:
        storage = absolute(storage)
    metrics_file = config.metrics_file and absolute(config.metrics_file)
    if metrics_file is None and local:
        metrics_file = str(Path(storage, config.run_name, "metrics.jsonl"))
    return dataclasses.replace(
        config,
        storage_path=storage,
        metrics_file=metrics_file,
        model_id=absolute(config.model_id) if Path(config.model_id).is_dir() else config.model_id,
        data=config.data and absolute(config.data),
        tokenizer=config.tokenizer and absolute(config.tokenizer),
    )


def run(config: TrainConfig) -> ray.train.Result:
    """Train on the Ray cluster this process belongs to (or a local one); resumes the run's latest checkpoint."""
    config = resolve_paths(config)
    if not ray.is_initialized():
        ray.init()  # RAY_ADDRESS under `ray job submit`, else a local instance
    gpus = int(ray.cluster_resources().get("GPU", 0))
    use_gpu = not config.cpu and gpus > 0
    num_workers = config.num_workers or (gpus if use_gpu else 2)
    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config=dataclasses.asdict(config),
        torch_config=TorchConfig(backend="nccl" if use_gpu else "gloo"),
        scaling_config=ray.train.ScalingConfig(num_workers=num_workers, use_gpu=use_gpu),
        run_config=ray.train.RunConfig(
            name=config.run_name,
            storage_path=config.storage_path,
            # the latest checkpoint resumes; one more in case the newest is unreadable
            checkpoint_config=ray.train.CheckpointConfig(num_to_keep=2),
            # a model or tokenizer missing locally is an error, never a download
            worker_runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1"}},
        ),
    )
    return trainer.fit()


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_args(argv)
    try:
        result = run(config)
    except ray.train.TrainingFailedError as error:
        print(f"training failed: {error}", file=sys.stderr)
        return 1
    metrics = result.metrics or {}
    print(f"done: step {metrics.get('step')}, loss {metrics.get('loss')}, checkpoint {result.checkpoint}")
    return 0


if __name__ == "__main__":
    # Run as the module `train`: Ray workers then import train_loop_per_worker by name (Ray puts this folder on their
    # path) instead of receiving it pickled by value from __main__, which fails on torch's configuration modules.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import train

    sys.exit(train.main())
