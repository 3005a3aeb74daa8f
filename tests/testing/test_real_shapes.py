"""Real-shape configs for random-weight benchmarks (docs/reference/models.md §2.1)."""
from __future__ import annotations

import pytest

from hymt.testing import FAMILY_NAMES, real_shape_config, tiny_config


@pytest.mark.parametrize(("family", "dims", "ids"), [
    ("HY-MT1.5-1.8B", (2048, 6144, 32, 16, 4, 120818), (120000, 120020, 120002)),
    ("Hy-MT2-1.8B", (2048, 6144, 32, 16, 4, 120818), (120000, 120020, 120002)),
    ("Hunyuan-MT-7B", (4096, 14336, 32, 32, 8, 128167), (127958, 127960, 127961)),
    ("hy-mt2-7b", (4096, 14336, 32, 32, 8, 128167), (127958, 127960, 127961)),
])
def test_real_dimensions_and_ids(family, dims, ids):
    c = real_shape_config(family)
    keys = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "vocab_size")
    assert tuple(c[k] for k in keys) == dims
    assert (c["bos_token_id"], c["eos_token_id"], c["pad_token_id"]) == ids
    assert c["head_dim"] == 128 and c["torch_dtype"] == "bfloat16"
    assert c["max_position_embeddings"] == 262144


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_same_architecture_fields_as_the_tiny_config(family):
    real, tiny = real_shape_config(family), tiny_config(family)
    for key in ("architectures", "model_type", "rope_scaling", "rope_theta", "use_qk_norm", "tie_word_embeddings"):
        assert real[key] == tiny[key]


def test_transformers_accepts_the_config():
    from transformers import AutoConfig

    config = AutoConfig.for_model(**real_shape_config("HY-MT1.5-7B"))
    assert config.hidden_size == 4096 and config.num_key_value_heads == 8
