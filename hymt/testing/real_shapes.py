"""Full-size config.json of each family, for benchmarks with random weights (docs/reference/models.md §2.1)."""
from __future__ import annotations

from hymt.testing.tiny_checkpoint import architecture_fields, tiny_family

_SHAPES = {
    "1.8B": dict(
        hidden_size=2048, intermediate_size=6144, num_hidden_layers=32, num_attention_heads=16,
        num_key_value_heads=4, head_dim=128, attention_head_dim=128, vocab_size=120818,
        bos_token_id=120000, eos_token_id=120020, pad_token_id=120002,
    ),
    "7B": dict(
        hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
        num_key_value_heads=8, head_dim=128, attention_head_dim=128, vocab_size=128167,
        org_vocab_size=128167, bos_token_id=127958, eos_token_id=127960, pad_token_id=127961,
        sep_token_id=127962,
    ),
}


def real_shape_config(family: str) -> dict:
    """The real config.json of `family` (bf16, 262,144 positions)."""
    fam = tiny_family(family)
    config = architecture_fields(fam.size) | _SHAPES[fam.size]
    config.update(max_position_embeddings=262144, torch_dtype="bfloat16", _name_or_path=f"tencent/{fam.name}")
    return config
