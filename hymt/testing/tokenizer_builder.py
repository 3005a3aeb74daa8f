"""Tiny byte-level BPE tokenizers that carry a family's real special tokens.

Byte-level, so any Unicode text round-trips; trained once per process on a small built-in
multilingual corpus, so the merges are deterministic. `padded_tokenizer_json` stretches one to
a real vocabulary size (benchmarks with random real-shape weights emit any id).
"""
from __future__ import annotations

import json
from functools import cache, lru_cache

from hymt.errors import InvalidInputError

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

#: Special-token strings by tokenizer kind (docs/reference/models.md §4).
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


@cache
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


#: Syllables of the filler words (consonant + vowel): fillers read as Latin-script pseudo-words.
_FILLER_SYLLABLES = tuple(c + v for c in "bdfgklmnprstvz" for v in "aeiou")


def filler_token(n: int) -> str:
    """The byte-level text of filler word `n` >= 0: a space and two or more syllables.

    Bijective base-70 numbering, so distinct `n` give distinct words.
    """
    base = len(_FILLER_SYLLABLES)
    k, word = n + base + 1, ""  # + base + 1: at least two syllables
    while k:
        k, digit = divmod(k - 1, base)
        word = _FILLER_SYLLABLES[digit] + word
    return "\u0120" + word  # "Ġ": the byte-level form of a space


@lru_cache(maxsize=4)
def padded_tokenizer_json(kind: str, vocab_size: int, special_ids: tuple[tuple[str, int], ...]) -> str:
    """The tiny tokenizer of `kind` stretched to `vocab_size` ids, specials at `special_ids`.

    The trained byte-level BPE keeps ids 0..n-1, so text encodes exactly as the tiny
    tokenizer encodes it; every other id that is not a special token is a filler word no
    merge produces (a byte-level BPE ignores vocabulary entries without merges). Any id below
    `vocab_size` then decodes (a random model emits any id).

    Args:
        special_ids: (special-token text, id) pairs, e.g. a real checkpoint's ids.
    """
    data = json.loads(tokenizer_json(kind))
    vocab: dict[str, int] = data["model"]["vocab"]
    trained = len(vocab)
    by_id = {token_id: text for text, token_id in special_ids}
    if len(by_id) != len(special_ids) or len(set(dict(special_ids))) != len(special_ids):
        raise InvalidInputError(
            f"special_ids must name distinct tokens at distinct ids, got {special_ids}", field="special_ids"
        )
    outside = {t: i for i, t in by_id.items() if not trained <= i < vocab_size}
    if outside:
        raise InvalidInputError(
            f"special ids must lie in [{trained}, {vocab_size}) (above the trained BPE): {outside}",
            field="special_ids",
        )
    n = 0
    for token_id in range(trained, vocab_size):
        if token_id in by_id:
            # In the model's vocabulary too: an added token the model lacks would get the next
            # free id past the model's size instead of its own.
            vocab[by_id[token_id]] = token_id
            continue
        while filler_token(n) in vocab:  # a trained merge may spell a short filler
            n += 1
        vocab[filler_token(n)] = token_id
        n += 1
    template = data["added_tokens"][0]
    data["added_tokens"] = [
        {**template, "id": token_id, "content": text, "special": True} for token_id, text in sorted(by_id.items())
    ]
    return json.dumps(data, ensure_ascii=False)


def added_special_ids(tokenizer_text: str) -> dict[str, int]:
    """Special-token text -> id of a tokenizer.json text."""
    return {t["content"]: t["id"] for t in json.loads(tokenizer_text)["added_tokens"] if t["special"]}


@cache
def _summary(kind: str) -> tuple[int, tuple[tuple[str, int], ...]]:
    text = tokenizer_json(kind)
    data = json.loads(text)
    size = len(data["model"]["vocab"]) + len(data["added_tokens"])
    return size, tuple(added_special_ids(text).items())


def tokenizer_vocab_size(kind: str) -> int:
    """Number of ids in the tiny tokenizer of `kind` (BPE vocabulary plus added tokens)."""
    return _summary(kind)[0]


def special_token_ids(kind: str) -> dict[str, int]:
    """Special-token text -> id in the tiny tokenizer of `kind`."""
    return dict(_summary(kind)[1])
