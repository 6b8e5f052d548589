"""training/train.py's sharded initialisation on two CPU processes (gloo), against building the whole model first.

The test saves its own Qwen2 models with `save_pretrained` (random weights, nothing downloaded). Each way of building
runs in processes of its own, so that each rank's peak resident set is that way's alone.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")
pytest.importorskip("ray.train")
pytest.importorskip("transformers")

import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from safetensors.torch import save_file  # noqa: E402
from transformers import Qwen2Config, Qwen2ForCausalLM  # noqa: E402

from training import train  # noqa: E402

# About 37 million parameters (150 MB in fp32) in twelve layers, none over 4 MB: the whole model stands out from what
# importing torch costs each process, and the largest tensor, which loading one at a time may add, does not.
SMALL = {
    **train.ARCHITECTURES["tiny"],
    "hidden_size": 512,
    "intermediate_size": 1536,
    "num_hidden_layers": 12,
    "vocab_size": 4096,
}
TOKENS = torch.tensor([[5, 17, 300, 4000, 9, 4095, 2, 1024]])


def _save(folder: Path, config: dict[str, Any], *, seed: int, **options: Any) -> Path:
    torch.manual_seed(seed)
    Qwen2ForCausalLM(Qwen2Config(**config)).save_pretrained(folder, **options)
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {
        # split over files, so the index is read; tied embeddings, as Qwen2.5-1.5B's
        "small": _save(root / "small", SMALL, seed=1, max_shard_size="50MB"),
        # one file in bf16, with an output layer of its own
        "untied": _save(
            root / "untied", {**train.ARCHITECTURES["tiny"], "tie_word_embeddings": False}, seed=2, dtype=torch.bfloat16
        ),
    }


def _logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=TOKENS % model.config.vocab_size).logits


def _whole_then_sharded(folders: dict[str, Path]) -> dict[str, Any]:
    """The way before sharded initialisation: every rank builds the whole model, then shards it."""
    model = train.shard_model(train.build_model(str(folders["small"])), device_type="cpu", mixed_precision=False)
    return {"peak_rss": train.peak_rss_bytes(), "small": _logits(model)}


def _sharded(folders: dict[str, Path]) -> dict[str, Any]:
    cpu = torch.device("cpu")
    model = train.build_sharded_model(str(folders["small"]), device=cpu)
    result: dict[str, Any] = {
        "peak_rss": train.peak_rss_bytes(),
        "local_parameters": sum(p.to_local().numel() for p in model.parameters()),
        "small": _logits(model),  # after this the root's parameters stay gathered
    }
    untied = train.build_sharded_model(str(folders["untied"]), device=cpu)
    result["untied"] = _logits(untied)
    result["untied_head_is_embedding"] = untied.lm_head.weight is untied.model.embed_tokens.weight

    tiny = train.build_sharded_model("tiny", device=cpu, seed=3, activation_checkpointing=True)
    embeddings = tiny.model.embed_tokens.weight.full_tensor()
    result["tiny"] = {
        "tied": tiny.lm_head.weight is tiny.model.embed_tokens.weight,
        "halves_differ": not torch.equal(embeddings[:512], embeddings[512:]),
        "std": float(embeddings.std()),
        "norm": tiny.model.norm.weight.full_tensor(),
        "bias": tiny.model.layers[0].self_attn.q_proj.bias.full_tensor(),
        "inv_freq": tiny.model.rotary_emb.inv_freq,
    }
    optimizer = torch.optim.AdamW(tiny.parameters(), lr=1e-3)
    loss, _ = train.train_step(tiny, optimizer, None, TOKENS % 1024, max_grad_norm=1.0)
    result["tiny"]["loss"] = train.mean_over_ranks(loss)
    return result


BUILDS = {"whole_then_sharded": _whole_then_sharded, "sharded": _sharded}


def _rank(rank: int, world_size: int, folder: str, build: str, folders: dict[str, Path]) -> None:
    dist.init_process_group("gloo", init_method=f"file://{folder}/store-{build}", rank=rank, world_size=world_size)
    try:
        torch.save(BUILDS[build](folders), Path(folder, f"{build}-{rank}.pt"))
    finally:
        dist.destroy_process_group()


@pytest.fixture(scope="module")
def ranks(folders: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Each build's results on ranks 0 and 1."""
    folder = tmp_path_factory.mktemp("ranks")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GLOO_SOCKET_IFNAME", "lo")  # the two processes talk over loopback only
        patch.setenv("OMP_NUM_THREADS", "1")  # one core each on a small machine
        for build in BUILDS:
            mp.spawn(_rank, args=(2, str(folder), build, folders), nprocs=2, join=True)
    return {build: [torch.load(folder / f"{build}-{rank}.pt") for rank in (0, 1)] for build in BUILDS}


@pytest.fixture(scope="module")
def whole(folders: dict[str, Path]) -> dict[str, torch.Tensor]:
    """The logits of each saved model loaded whole in this process, without FSDP."""
    return {name: _logits(train.build_model(str(path))) for name, path in folders.items()}


@pytest.mark.parametrize("build", BUILDS)
def test_logits_equal_those_of_the_unsharded_model(
    build: str, ranks: dict[str, list[dict[str, Any]]], whole: dict[str, torch.Tensor]
) -> None:
    for result in ranks[build]:
        torch.testing.assert_close(result["small"], whole["small"], rtol=1e-5, atol=1e-5)


def test_bf16_weights_load_into_fp32_shards_with_an_untied_head(
    ranks: dict[str, list[dict[str, Any]]], whole: dict[str, torch.Tensor]
) -> None:
    for result in ranks["sharded"]:
        assert not result["untied_head_is_embedding"]
        torch.testing.assert_close(result["untied"], whole["untied"], rtol=1e-5, atol=1e-5)


def test_each_rank_holds_half_of_the_parameters(ranks: dict[str, list[dict[str, Any]]]) -> None:
    with torch.device("meta"):
        total = train.count_parameters(Qwen2ForCausalLM(Qwen2Config(**SMALL)))
    local = [result["local_parameters"] for result in ranks["sharded"]]
    assert sum(local) == total
    assert all(abs(count - total / 2) < total / 100 for count in local)


def test_sharded_build_peaks_lower_on_every_rank(ranks: dict[str, list[dict[str, Any]]]) -> None:
    for before, after in zip(ranks["whole_then_sharded"], ranks["sharded"], strict=True):
        assert after["peak_rss"] < before["peak_rss"]


def test_random_initialisation_is_hugging_faces_on_each_shard(ranks: dict[str, list[dict[str, Any]]]) -> None:
    reference = Qwen2ForCausalLM(Qwen2Config(**train.ARCHITECTURES["tiny"]))
    for result in (ranks["sharded"][0]["tiny"], ranks["sharded"][1]["tiny"]):
        assert result["tied"]
        assert result["halves_differ"]  # each rank drew its own rows
        assert result["std"] == pytest.approx(reference.config.initializer_range, rel=0.05)
        assert torch.equal(result["norm"], torch.ones(64))
        assert torch.equal(result["bias"], torch.zeros(64))
        assert torch.equal(result["inv_freq"], reference.model.rotary_emb.inv_freq)  # recomputed, not left empty
        assert result["loss"] == pytest.approx(math.log(1024), abs=0.1)  # random weights: uniform over the vocabulary


def test_safetensors_index_maps_names_to_files(folders: dict[str, Path], tmp_path: Path) -> None:
    split = train.safetensors_index(folders["small"])
    assert len(set(split.values())) > 1 and "model.embed_tokens.weight" in split
    assert "lm_head.weight" not in split  # tied: saved once, under the embeddings
    single = train.safetensors_index(folders["untied"])
    assert set(single.values()) == {"model.safetensors"} and "lm_head.weight" in single
    with pytest.raises(ValueError, match=r"has no model\.safetensors or model\.safetensors\.index\.json"):
        train.safetensors_index(tmp_path)


def test_load_shards_fills_a_whole_model_and_names_what_is_missing(folders: dict[str, Path], tmp_path: Path) -> None:
    config = Qwen2Config(**{**train.ARCHITECTURES["tiny"], "tie_word_embeddings": False})
    with torch.device("meta"):
        model = Qwen2ForCausalLM(config)
    model.to_empty(device="cpu")
    train.load_shards(model, folders["untied"])
    saved = train.build_model(str(folders["untied"]))
    for (name, loaded), expected in zip(model.named_parameters(), saved.parameters(), strict=True):
        assert torch.equal(loaded, expected), name

    state = {name: tensor.contiguous() for name, tensor in saved.state_dict().items() if name != "lm_head.weight"}
    save_file(state, tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match=r"lack 1 of the model's parameters: lm_head\.weight"):
        train.load_shards(model, tmp_path)
