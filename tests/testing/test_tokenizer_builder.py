"""The tiny tokenizers: lossless on any Unicode, family special tokens as single ids."""
from __future__ import annotations

import pytest
from tokenizers import Tokenizer

from hymt.testing.tokenizer_builder import SPECIAL_TOKENS, special_token_ids, tokenizer_json, tokenizer_vocab_size

KINDS = sorted(SPECIAL_TOKENS)

SAMPLES = (
    "Hello, world!",
    "今天天气真好。",
    "こんにちは、世界",
    "สวัสดีครับ",
    "Привет, мир",
    "مرحبا بالعالم",
    "Grüße aus Köln",
    "emoji 👋🏽 🧑‍🚀 ✨",
    "བཀྲ་ཤིས་བདེ་ལེགས།",  # Tibetan: not in the training corpus
    "សួស្តី​ពិភពលោក",  # Khmer, with a zero-width space
    "  leading, trailing spaces\tand\ttabs\nand lines  ",
    "\x00\x7f control bytes \u200d\ufeff",
    "",
)


@pytest.fixture(scope="module", params=KINDS)
def tokenizer(request) -> tuple[str, Tokenizer]:
    return request.param, Tokenizer.from_str(tokenizer_json(request.param))


@pytest.mark.parametrize("text", SAMPLES)
def test_any_unicode_round_trips(tokenizer, text):
    _, tok = tokenizer
    ids = tok.encode(text, add_special_tokens=False).ids
    assert tok.decode(ids, skip_special_tokens=False) == text


def test_special_tokens_are_single_ids_inside_text(tokenizer):
    kind, tok = tokenizer
    ids = special_token_ids(kind)
    assert set(ids) == set(SPECIAL_TOKENS[kind])
    for text, token_id in ids.items():
        encoded = tok.encode(f"abc{text}今天", add_special_tokens=False).ids
        assert encoded.count(token_id) == 1
        assert tok.decode(encoded, skip_special_tokens=True) == "abc今天"


def test_other_familys_markers_are_plain_text():
    # docs/reference/models.md §4: ASCII <|extra_0|> is ordinary text to a 1.8B tokenizer, and vice versa.
    tok = Tokenizer.from_str(tokenizer_json("hy-1.8b"))
    encoded = tok.encode("<|extra_0|>", add_special_tokens=False).ids
    assert len(encoded) > 1
    assert tok.decode(encoded) == "<|extra_0|>"


def test_vocab_is_odd_sized_and_matches_the_tokenizer(tokenizer):
    kind, tok = tokenizer
    size = tokenizer_vocab_size(kind)
    assert size == tok.get_vocab_size()
    assert size % 8 != 0  # exercises the padded LM head
    assert 400 <= size <= 520
    assert max(special_token_ids(kind).values()) < size


def test_training_is_cached_and_deterministic(tokenizer):
    kind, _ = tokenizer
    assert tokenizer_json(kind) is tokenizer_json(kind)  # built once per process
    assert tokenizer_json.__wrapped__(kind) == tokenizer_json(kind)  # a fresh build is identical


def test_corpus_scripts_compress(tokenizer):
    _, tok = tokenizer
    text = "Translate the following segment into Chinese, without additional explanation."
    assert len(tok.encode(text, add_special_tokens=False).ids) < len(text.encode()) / 2


def _padded(size=1000, specials=(("<|eos|>", 700), ("<|pad|>", 999))):
    from hymt.testing.tokenizer_builder import padded_tokenizer_json

    return Tokenizer.from_str(padded_tokenizer_json("hy-7b", size, specials))


def test_padded_tokenizer_fills_every_id_and_keeps_encoding():
    tok, tiny = _padded(), Tokenizer.from_str(tokenizer_json("hy-7b"))
    assert tok.get_vocab_size() == 1000 and tok.id_to_token(1000) is None
    assert tok.token_to_id("<|eos|>") == 700 and tok.token_to_id("<|pad|>") == 999
    words = [tok.decode([i]) for i in range(tiny.get_vocab_size(), 1000) if i not in (700, 999)]
    assert len(set(words)) == len(words) and all(w.startswith(" ") and w[1:].isalpha() for w in words)
    for text in SAMPLES:
        assert tok.encode(text, add_special_tokens=False).ids == tiny.encode(text, add_special_tokens=False).ids
    assert tok.encode("a<|eos|>b", add_special_tokens=False).ids.count(700) == 1
    assert tok.decode([5, 700, 600], skip_special_tokens=True) == tok.decode([5, 600])


@pytest.mark.parametrize("specials", [
    (("<|eos|>", 3),),  # inside the trained BPE ids
    (("<|eos|>", 1000),),  # past the vocabulary
    (("<|eos|>", 700), ("<|pad|>", 700)),  # one id twice
])
def test_padded_tokenizer_rejects_bad_special_ids(specials):
    from hymt.errors import InvalidInputError

    with pytest.raises(InvalidInputError) as info:
        _padded(specials=specials)
    assert info.value.field == "special_ids"
