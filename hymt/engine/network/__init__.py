"""Native model implementations (Hunyuan dense: HY-MT1.5, Hunyuan-MT, Chimera, Hy-MT2 dense)."""
from hymt.engine.network.hunyuan_config import HunyuanDenseConfig
from hymt.engine.network.hunyuan_dense import HunyuanDenseForCausalLM, allocate_kv_cache, kv_bytes_per_block

__all__ = ["HunyuanDenseConfig", "HunyuanDenseForCausalLM", "allocate_kv_cache", "kv_bytes_per_block"]
