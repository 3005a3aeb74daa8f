"""Tiny byte-level BPE tokenizers that carry a family's real special tokens.

Byte-level, so any Unicode text round-trips; trained once per process on a small built-in
multilingual corpus, so the merges are deterministic.
"""
from __future__ import annotations

import json
from functools import lru_cache

#: A few sentences per script the models meet, so merges cover more than ASCII.
CORPUS = (
    "The weather is really nice today. It's on the house. Mr. Smith paid 3.14 dollars.",
    "Translate the following segment into Chinese, without additional explanation.",
    "Translate the following text into English. Note that you should only output the translated result.",
    "今天天气真好。把下面的文本翻译成英语，不要额外解释。将以下文本翻译为中文，注意只需要输出翻译后的结果。",
    "参考下面的翻译：翻译成 参考上面的信息，把下面的文本翻译成",
    "今日はいい天気ですね。東京へ行きます。",
    "วันนี้อากาศดีมาก ฉันชอบกินข้าว",
    "Сегодня хорошая погода. Привет, как дела?",
    "الطقس جميل اليوم. مرحبا بك.",
    "Das Wetter ist heute schön. Guten Morgen!",
    "Le temps est magnifique aujourd'hui. Bonjour à tous.",
)

#: Special-token strings by tokenizer kind (models.md §4).
SPECIAL_TOKENS = {
    "hy-1.8b": (
        "<｜hy_begin▁of▁sentence｜>",
        "<｜hy_▁pad▁｜>",
        "<｜hy_User｜>",
        "<｜hy_Assistant｜>",
        "<｜hy_place▁holder▁no▁2｜>",
        "<｜hy_place▁holder▁no▁3｜>",
        "<｜hy_place▁holder▁no▁8｜>",
    ),
    "hy-7b": (
        "<|endoftext|>",
        "<|startoftext|>",
        "<|eos|>",
        "<|pad|>",
        "<|extra_0|>",
        "<|extra_4|>",
        "<|extra_5|>",
    ),
}

#: Merge budget: 256 byte tokens + merges + specials; chosen so no kind's size is a multiple of 8.
VOCAB_SIZE = {"hy-1.8b": 451, "hy-7b": 449}


@lru_cache(maxsize=None)
def tokenizer_json(kind: str) -> str:
    """The tokenizer.json text of a tiny tokenizer of `kind` ("hy-1.8b" or "hy-7b")."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    specials = SPECIAL_TOKENS[kind]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE[kind] - len(specials),
        min_frequency=1,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    tokenizer.add_special_tokens(list(specials))
    size = tokenizer.get_vocab_size()
    if size % 8 == 0:  # keep the LM-head padding path exercised
        tokenizer.add_tokens(["<pad-odd>"])
    return tokenizer.to_str()


@lru_cache(maxsize=None)
def _summary(kind: str) -> tuple[int, tuple[tuple[str, int], ...]]:
    data = json.loads(tokenizer_json(kind))
    size = len(data["model"]["vocab"]) + len(data["added_tokens"])
    return size, tuple((t["content"], t["id"]) for t in data["added_tokens"] if t["special"])


def tokenizer_vocab_size(kind: str) -> int:
    """Number of ids in the tiny tokenizer of `kind` (BPE vocabulary plus added tokens)."""
    return _summary(kind)[0]


def special_token_ids(kind: str) -> dict[str, int]:
    """Special-token text -> id in the tiny tokenizer of `kind`."""
    return dict(_summary(kind)[1])
