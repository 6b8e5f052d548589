"""training/train.py's FSDP2 step and DCP checkpoint on two CPU processes (gloo), without Ray."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ray.train")
pytest.importorskip("transformers")

import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.distributed.tensor import DTensor, Shard  # noqa: E402

from training import train  # noqa: E402

STEPS = 5
MAX_GRAD_NORM = 0.1  # below the tiny model's gradient norm, so every step clips


def _sharded_tiny(activation_checkpointing: bool = False) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    model = train.shard_model(
        train.build_model("tiny"),
        device_type="cpu",
        mixed_precision=False,
        activation_checkpointing=activation_checkpointing,
    )
    return model, torch.optim.AdamW(model.parameters(), lr=3e-3)


def _train(model: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: torch.Tensor) -> dict[str, list[float]]:
    """STEPS steps on one batch; records the norm train_step returns and the one the optimizer saw."""
    clipped: list[float] = []

    def gradient_norm(*_: Any) -> None:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), math.inf)  # measures, changes nothing
        clipped.append(float(norm.full_tensor() if isinstance(norm, DTensor) else norm))

    hook = optimizer.register_step_pre_hook(gradient_norm)
    losses, norms = [], []
    for _ in range(STEPS):
        loss, norm = train.train_step(model, optimizer, None, batch, max_grad_norm=MAX_GRAD_NORM)
        losses.append(loss.item())
        norms.append(norm.item())
    hook.remove()
    return {"losses": losses, "norms": norms, "clipped": clipped}


def _rank(rank: int, world_size: int, folder: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{folder}/store", rank=rank, world_size=world_size)
    try:
        batch = train.synthetic_batch(1, rank=0, seed=0, batch_size=2, seq_len=32, vocab_size=1024)  # same on both
        model, optimizer = _sharded_tiny()
        result: dict[str, Any] = _train(model, optimizer, batch)
        result["parameters"] = [
            {
                "dtensor": isinstance(p, DTensor),
                "mesh": p.device_mesh.size() if isinstance(p, DTensor) else 0,
                "shard0": isinstance(p, DTensor) and p.placements == (Shard(0),),
                "local": p.to_local().numel() if isinstance(p, DTensor) else p.numel(),
                "global": p.numel(),
            }
            for p in model.parameters()
        ]
        result["checkpointed"] = _train(*_sharded_tiny(activation_checkpointing=True), batch)["losses"]

        # Checkpoint, take one more step, then restore into a fresh model and take that step again.
        train.save_checkpoint(Path(folder, "checkpoint"), model, optimizer, step=STEPS, model_id="tiny")
        result["continued"] = train.train_step(model, optimizer, None, batch, max_grad_norm=MAX_GRAD_NORM)[0].item()
        fresh, fresh_optimizer = _sharded_tiny()
        result["restored_step"] = train.load_checkpoint(
            Path(folder, "checkpoint"), fresh, fresh_optimizer, model_id="tiny"
        )
        restored = train.train_step(fresh, fresh_optimizer, None, batch, max_grad_norm=MAX_GRAD_NORM)[0]
        result["restored"] = restored.item()
        Path(folder, f"rank{rank}.json").write_text(json.dumps(result), encoding="utf-8")
    finally:
        dist.destroy_process_group()


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("fsdp")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GLOO_SOCKET_IFNAME", "lo")  # the two processes talk over loopback only
        patch.setenv("OMP_NUM_THREADS", "1")  # one core each on a small machine
        mp.spawn(_rank, args=(2, str(folder)), nprocs=2, join=True)
    return [json.loads((folder / f"rank{rank}.json").read_text(encoding="utf-8")) for rank in (0, 1)]


def test_loss_falls_on_a_fixed_batch(ranks: list[dict[str, Any]]) -> None:
    losses = ranks[0]["losses"]
    assert losses[0] == pytest.approx(math.log(1024), abs=0.1)  # random weights: uniform over the vocabulary
    assert all(later < earlier for earlier, later in itertools.pairwise(losses))
    assert losses[-1] < losses[0] - 0.5


def test_ranks_agree_on_loss_and_gradient_norm(ranks: list[dict[str, Any]]) -> None:
    assert ranks[0]["losses"] == pytest.approx(ranks[1]["losses"], abs=1e-6)
    assert ranks[0]["norms"] == pytest.approx(ranks[1]["norms"], abs=1e-6)


def test_parameters_are_dtensors_sharded_across_both_ranks(ranks: list[dict[str, Any]]) -> None:
    for mine, theirs in zip(ranks[0]["parameters"], ranks[1]["parameters"], strict=True):
        assert mine["dtensor"] and mine["shard0"] and mine["mesh"] == 2
        assert mine["local"] + theirs["local"] == mine["global"]
        assert mine["local"] < mine["global"]
    total = sum(p["global"] for p in ranks[0]["parameters"])
    assert total == 139_840  # the tiny model, tied embeddings once


def test_gradients_are_clipped(ranks: list[dict[str, Any]]) -> None:
    result = ranks[0]
    assert min(result["norms"]) > MAX_GRAD_NORM  # what train_step reports: the norm before clipping
    assert result["clipped"] == pytest.approx([MAX_GRAD_NORM] * STEPS, rel=1e-4)  # what the optimizer stepped with


def test_activation_checkpointing_changes_no_number(ranks: list[dict[str, Any]]) -> None:
    assert ranks[0]["checkpointed"] == pytest.approx(ranks[0]["losses"], abs=1e-5)


def test_checkpoint_restores_model_and_optimizer(ranks: list[dict[str, Any]]) -> None:
    for result in ranks:
        assert result["restored_step"] == STEPS
        assert result["restored"] == pytest.approx(result["continued"], abs=1e-6)
        assert result["continued"] < result["losses"][-1]
