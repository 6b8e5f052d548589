"""The parts of training/train.py that need no process group: model shapes, schedule, data, metrics, flags."""

from __future__ import annotations

import itertools
import json
import os
import sys
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ray.train")
pytest.importorskip("transformers")

from training import train  # noqa: E402

from .conftest import WORDS, Corpus  # noqa: E402


def test_qwen_architecture_has_the_published_shape_and_size() -> None:
    with torch.device("meta"):  # 1.5 billion parameters, never allocated
        model = train.build_model("Qwen/Qwen2.5-1.5B")  # the AWS sample's --model_id
    config = model.config
    shape = (config.hidden_size, config.intermediate_size, config.num_hidden_layers, config.num_attention_heads,
             config.num_key_value_heads, config.vocab_size, config.max_position_embeddings)
    assert shape == (1536, 8960, 28, 12, 2, 151936, 32768)
    assert config.rms_norm_eps == 1e-6
    assert getattr(config, "rope_parameters", None) or config.rope_theta  # renamed in transformers 5
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert train.count_parameters(model) == 1_543_714_304  # Qwen2.5-1.5B's 1.54 B, tied embeddings counted once
    assert train.flops_per_token(model, 2048) == 6 * 1_543_714_304 + 12 * 28 * 1536 * 2048


def test_tiny_model_and_unknown_names() -> None:
    model = train.build_model("tiny")
    assert len(train.decoder_layers(model)) == 2
    assert model.config.use_cache is False
    with pytest.raises(ValueError, match=r"neither a local folder nor one of: qwen2\.5-1\.5b, tiny"):
        train.build_model("gpt-5")


def test_local_model_folder_loads_in_fp32(tmp_path: Path) -> None:
    torch.manual_seed(0)
    saved = train.build_model("tiny").to(torch.bfloat16)
    saved.save_pretrained(tmp_path)
    loaded = train.build_model(str(tmp_path))
    assert loaded.model.embed_tokens.weight.dtype == torch.float32  # fp32 master weights whatever was saved
    assert torch.equal(loaded.lm_head.weight, saved.lm_head.weight.float())


def test_schedule_warms_up_linearly_then_decays_to_a_tenth() -> None:
    factors = [train.lr_factor(i, warmup_steps=2, total_steps=8) for i in range(8)]
    assert factors[:3] == [0.5, 1.0, 1.0]
    assert all(a > b for a, b in itertools.pairwise(factors[2:]))
    assert factors[-1] == pytest.approx(0.1)
    assert train.lr_factor(20, warmup_steps=2, total_steps=8) == pytest.approx(0.1)  # steps past the end stay there


def test_scheduler_resumed_after_k_steps_matches_one_that_ran_them() -> None:
    config = train.TrainConfig(steps=10, warmup_steps=3, learning_rate=1e-3)

    def optimizer() -> torch.optim.Optimizer:
        return torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=config.learning_rate)

    running = train.make_scheduler(optimizer(), config)
    for done in range(10):
        resumed = train.make_scheduler(optimizer(), config, done_steps=done)
        assert resumed.get_last_lr() == pytest.approx(running.get_last_lr())
        running.optimizer.step()
        running.step()


def test_synthetic_batches_depend_on_seed_rank_and_step_only() -> None:
    def batch(step: int, rank: int) -> torch.Tensor:
        return train.synthetic_batch(step, rank=rank, seed=0, batch_size=2, seq_len=16, vocab_size=1024)

    assert torch.equal(batch(3, 0), batch(3, 0))
    assert not torch.equal(batch(3, 0), batch(3, 1))
    assert not torch.equal(batch(3, 0), batch(4, 0))
    assert batch(3, 0).shape == (2, 16)
    assert int(batch(3, 0).max()) < 1024


def test_jsonl_is_sharded_by_line_and_packed_into_blocks(corpus: Corpus) -> None:
    ranks = [train.load_blocks(corpus.data, corpus.tokenizer, seq_len=16, rank=r, world_size=2) for r in (0, 1)]
    tokens_per_line = len(WORDS) + 1  # each line is the eight words, then [EOS]
    assert [len(blocks) for blocks in ranks] == [100 * tokens_per_line // 16] * 2
    # rank 0 starts with line 0, rank 1 with line 1 (the sentence rotated by one word)
    assert ranks[0][0, :tokens_per_line].tolist() == [2, 3, 4, 5, 6, 7, 8, 9, 1]
    assert ranks[1][0, :tokens_per_line].tolist() == [3, 4, 5, 6, 7, 8, 9, 2, 1]
    with pytest.raises(ValueError, match="less than one block"):
        train.load_blocks(corpus.data, corpus.tokenizer, seq_len=10_000, rank=0, world_size=2)


def test_block_batches_continue_from_the_step_and_wrap_around() -> None:
    blocks = torch.arange(5).view(5, 1)
    assert [train.block_batch(blocks, step, 2).flatten().tolist() for step in (1, 2, 3, 4)] == [
        [0, 1], [2, 3], [4, 0], [1, 2]
    ]


def test_token_ids_beyond_the_model_vocabulary_are_refused(corpus: Corpus) -> None:
    config = train.TrainConfig(data=str(corpus.data), tokenizer=str(corpus.tokenizer), seq_len=8)
    assert train.batch_source(config, rank=0, world_size=1, vocab_size=1024)(1).shape == (1, 8)
    with pytest.raises(ValueError, match="beyond the model's vocabulary of 5"):
        train.batch_source(config, rank=0, world_size=1, vocab_size=5)


def test_cpu_peak_is_the_documented_placeholder() -> None:
    cpu = torch.device("cpu")
    assert train.peak_tflops(cpu) == pytest.approx(train.CPU_TFLOPS_PER_THREAD * torch.get_num_threads())
    assert train.peak_tflops(cpu, 42.0) == 42.0
    assert train.peak_memory_gb(cpu) > 0.01


def test_metrics_file_keeps_the_steps_a_resume_continues_from(tmp_path: Path) -> None:
    path = tmp_path / "run" / "metrics.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"step": step}) + "\n" for step in range(1, 6)), encoding="utf-8")
    train.start_metrics_file(path, after_step=3)
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [1, 2, 3]
    train.start_metrics_file(path, after_step=0)  # a fresh run
    assert path.read_text() == ""


def test_plot_needs_matplotlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "metrics.jsonl"
    rows = [{"step": step, "loss": 7.0 - step, "tokens_per_s": 1000.0 * step} for step in (1, 2, 3)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "matplotlib", None)  # as if not installed
        assert train.plot_metrics(path) is None
    pytest.importorskip("matplotlib")
    image = train.plot_metrics(path)
    assert image == tmp_path / "metrics.png"
    assert image.read_bytes().startswith(b"\x89PNG")


def test_flags_of_the_aws_sample_keep_their_defaults() -> None:
    config = train.parse_args([])
    assert (config.model_id, config.steps, config.seq_len, config.batch_size, config.learning_rate,
            config.num_workers) == ("qwen2.5-1.5b", 5, 128, 1, 2e-5, 0)
    assert not (config.cpu or config.require_efa or config.allow_tcp_fallback)
    assert config.max_grad_norm == 1.0


@pytest.mark.parametrize("argv", [
    ["--steps", "0"],
    ["--checkpoint_every", "-1"],
    ["--data", "x.jsonl"],
    ["--model_id", "no-such-model"],
])
def test_bad_flags_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        train.parse_args(argv)
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_paths_become_absolute_and_metrics_default_to_the_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = train.resolve_paths(train.parse_args(["--storage_path", "runs", "--run_name", "r1"]))
    assert config.storage_path == str(tmp_path / "runs")
    assert config.metrics_file == str(tmp_path / "runs" / "r1" / "metrics.jsonl")
    remote = train.resolve_paths(train.TrainConfig(storage_path="s3://bucket/runs"))
    assert (remote.storage_path, remote.metrics_file) == ("s3://bucket/runs", None)


def test_guards_come_from_the_file_beside_train_py_without_pinguard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("pinguard", "pinguard.launch", "pinguard.launch.guards"):
        monkeypatch.setitem(sys.modules, name, None)  # as in an image without pinguard
    monkeypatch.setattr(train, "__file__", str(tmp_path / "train.py"))  # as mounted with guards.py beside it
    assert train.load_guards() is None
    (tmp_path / "guards.py").write_text("def check_own_image():\n    return 'sha256:beside'\n", encoding="utf-8")
    guards = train.load_guards()
    assert guards is not None and guards.check_own_image() == "sha256:beside"


def test_guards_come_from_pinguard_when_installed() -> None:
    guards = train.load_guards()
    if guards is None:
        pytest.skip("pinguard.launch.guards is not importable here")
    assert callable(guards.check_own_image) and callable(guards.check_nccl_transport)
    assert guards.check_own_image({}) is None  # outside a pod it does nothing


def test_nccl_check_runs_a_collective_then_the_guard_with_the_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(train.dist, "all_reduce", lambda tensor: calls.append("all_reduce"))
    monkeypatch.setattr(train.dist, "get_rank", lambda: 0)
    monkeypatch.setattr(train.torch.cuda, "synchronize", lambda device: calls.append("synchronize"))
    monkeypatch.setenv("NCCL_DEBUG", "")
    monkeypatch.delenv("NCCL_DEBUG")  # unset now, and again after the test
    monkeypatch.setenv("NCCL_DEBUG_FILE", "/logs/nccl.%h.%p")  # the pod's setting
    guards = types.SimpleNamespace(check_nccl_transport=lambda **flags: calls.append(flags) or "efa")
    config = train.TrainConfig(require_efa=True)

    train.check_nccl_transport(config, torch.device("cpu"), guards)  # type: ignore[arg-type]
    assert calls == ["all_reduce", "synchronize", {"require_efa": True, "allow_tcp_fallback": False}]
    assert (os.environ["NCCL_DEBUG"], os.environ["NCCL_DEBUG_FILE"]) == ("INFO", "/logs/nccl.%h.%p")
    with pytest.raises(RuntimeError, match="--require_efa needs pinguard"):
        train.check_nccl_transport(config, torch.device("cpu"), None)
    train.check_nccl_transport(train.TrainConfig(), torch.device("cpu"), None)  # nothing required, nothing to check
