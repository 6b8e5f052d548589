from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog"]


@dataclass(frozen=True)
class Corpus:
    data: Path
    tokenizer: Path
    lines: list[str]


def _write_tokenizer(folder: Path) -> None:
    """A word-level tokenizer over WORDS, saved as a Hugging Face tokenizer folder (nothing downloaded)."""
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    vocab = {word: index for index, word in enumerate(["[UNK]", "[EOS]", *WORDS])}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", eos_token="[EOS]")
    fast.save_pretrained(str(folder))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """200 lines of one sentence with its words rotated: text a tiny model learns within a few steps."""
    folder = tmp_path_factory.mktemp("corpus")
    lines = [" ".join(WORDS[i % 8:] + WORDS[: i % 8]) for i in range(200)]
    data = folder / "train.jsonl"
    data.write_text("".join(json.dumps({"text": line}) + "\n" for line in lines), encoding="utf-8")
    _write_tokenizer(folder / "tokenizer")
    return Corpus(data, folder / "tokenizer", lines)
