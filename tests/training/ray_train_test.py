"""training/train.py end to end on Ray Train: two CPU workers, a checkpoint, then a run that resumes from it.

One local Ray instance serves the module (starting one costs seconds); both runs share the run name and storage, as a
job restarted with the same command does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.ray, pytest.mark.slow]
ray = pytest.importorskip("ray")
pytest.importorskip("ray.train")
pytest.importorskip("torch")
pytest.importorskip("transformers")

from training import train  # noqa: E402

from .conftest import Corpus  # noqa: E402

LEARNING_RATE, WARMUP = 3e-3, 1
METRICS = {"step", "loss", "learning_rate", "grad_norm", "tokens_per_s", "mfu", "peak_memory_gb", "step_time_s"}


@dataclass(frozen=True)
class Runs:
    storage: Path
    first: Any  # ray.train.Result
    first_metrics: list[dict[str, Any]]
    first_checkpoint: dict[str, bytes]  # its files, read before the resumed run replaces it
    resumed: Any
    metrics: list[dict[str, Any]]


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def ray_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("ray-home")))  # Ray keeps its auth token in ~/.ray
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(num_cpus=2, include_dashboard=False)
        try:
            yield
        finally:
            ray.shutdown()


@pytest.fixture(scope="module")
def runs(ray_session: None, corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    folder = tmp_path_factory.mktemp("runs")
    metrics = folder / "metrics.jsonl"

    def fit(steps: int) -> Any:
        return train.run(train.parse_args([
            "--model_id", "tiny", "--cpu", "--num_workers", "2", "--steps", str(steps), "--checkpoint_every", "2",
            "--seq_len", "32", "--batch_size", "4", "--learning_rate", str(LEARNING_RATE),
            "--warmup_steps", str(WARMUP), "--data", str(corpus.data), "--tokenizer", str(corpus.tokenizer),
            "--storage_path", str(folder / "storage"), "--run_name", "resume", "--metrics_file", str(metrics),
        ]))

    first = fit(4)
    first_metrics = _read(metrics)
    first_checkpoint = {path.name: path.read_bytes() for path in Path(first.checkpoint.path).iterdir()}
    resumed = fit(8)
    return Runs(folder / "storage" / "resume", first, first_metrics, first_checkpoint, resumed, _read(metrics))


def test_first_run_reports_every_step_and_ends_with_a_checkpoint(runs: Runs) -> None:
    assert [row["step"] for row in runs.first_metrics] == [1, 2, 3, 4]
    assert all(set(row) == METRICS for row in runs.first_metrics)
    assert runs.first.metrics["step"] == 4
    assert runs.first.metrics["loss"] == pytest.approx(runs.first_metrics[-1]["loss"])
    assert all(0 < row["mfu"] < 1 and row["tokens_per_s"] > 0 for row in runs.first_metrics)


def test_checkpoint_holds_the_shards_of_both_workers(runs: Runs) -> None:
    assert Path(runs.first.checkpoint.path) == runs.storage / "checkpoint_000004"
    assert set(runs.first_checkpoint) == {".metadata", "__0_0.distcp", "__1_0.distcp", train.TRAIN_STATE}
    assert json.loads(runs.first_checkpoint[train.TRAIN_STATE]) == {"step": 4, "model_id": "tiny"}


def test_resumed_run_continues_the_step_count(runs: Runs) -> None:
    assert [row["step"] for row in runs.metrics] == list(range(1, 9))
    assert runs.metrics[:4] == runs.first_metrics  # the first run's lines are kept, none repeated
    assert runs.resumed.metrics["step"] == 8
    assert Path(runs.resumed.checkpoint.path).name == "checkpoint_000008"


def test_resumed_run_starts_from_the_trained_weights(runs: Runs) -> None:
    losses = [row["loss"] for row in runs.metrics]
    learned = losses[0] - losses[3]
    assert learned > 0.5  # the corpus is easy: four steps are enough to show learning
    assert abs(losses[4] - losses[3]) < 0.3 * learned  # close to where the first run stopped, not back at the start
    assert losses[-1] < losses[3]


def test_resumed_run_continues_the_schedule(runs: Runs) -> None:
    expected = [LEARNING_RATE * train.lr_factor(step - 1, warmup_steps=WARMUP, total_steps=8) for step in range(5, 9)]
    assert [row["learning_rate"] for row in runs.metrics[4:]] == pytest.approx(expected)


def test_storage_keeps_the_two_latest_checkpoints(runs: Runs) -> None:
    kept = sorted(path.name for path in runs.storage.glob("checkpoint_*") if path.is_dir())
    assert kept == ["checkpoint_000006", "checkpoint_000008"]
