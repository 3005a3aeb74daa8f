"""`LLM`: the offline user API of the native engine.

    from hymt.engine import LLM, SamplingParams
    llm = LLM("tencent/HY-MT1.5-1.8B", max_num_seqs=256)
    results = llm.generate(["<prompt text>", [120000, 5, 6]], SamplingParams(max_tokens=64))
    print(results[0].text, results[1].token_ids)
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from hymt.engine.config import EngineConfig
from hymt.engine.native_engine import NativeEngine
from hymt.engine.outputs import RequestOutput
from hymt.engine.run_to_completion import run_to_completion
from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError

CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(EngineConfig))

Prompt = str | Sequence[int]


def engine_config_from_kwargs(config: dict[str, Any]) -> EngineConfig:
    """EngineConfig(**config), with unknown keys rejected by name."""
    unknown = sorted(set(config) - set(CONFIG_FIELDS))
    if unknown:
        raise InvalidInputError(
            f"unknown engine option(s) {unknown}; valid EngineConfig fields: {list(CONFIG_FIELDS)}",
            field=unknown[0],
        )
    return EngineConfig(**config)


class LLM:
    """A native engine over one checkpoint, for offline batches.

    Args:
        model: hub id or local model directory (resolved with hymt.checkpoint).
        device: default "cuda" when available, else "cpu".
        dtype: default bfloat16 on CUDA, float32 on CPU.
        **config: EngineConfig fields (max_num_seqs, max_num_batched_tokens, max_model_len,
            block_size, gpu_memory_utilization, gpu_memory_gb, num_kv_blocks, ...).
    """

    def __init__(self, model: str | Path, *, device: str | torch.device | None = None,
                 dtype: str | torch.dtype | None = None, **config: Any):
        engine_config = engine_config_from_kwargs(config)
        from hymt.checkpoint import load_checkpoint

        self.checkpoint = load_checkpoint(model)
        self.engine = NativeEngine(self.checkpoint, engine_config, device=device, dtype=dtype)

    @property
    def config(self) -> EngineConfig:
        return self.engine.config

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`; no special tokens are added except those written in it."""
        return self.checkpoint.encode(text)

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return self.checkpoint.decode(list(token_ids), skip_special_tokens=skip_special_tokens)

    def generate(
        self,
        prompts: Prompt | Sequence[Prompt],
        sampling: SamplingParams | Sequence[SamplingParams] | None = None,
        *,
        use_tqdm: bool = False,
    ) -> list[RequestOutput]:
        """Generate for every prompt; results in input order, each with .token_ids and .text.

        prompts: strings (tokenized with the checkpoint's tokenizer) or token-id lists; a
        single string or a single flat id list counts as one prompt.
        sampling: one SamplingParams for all, one per prompt, or None (greedy defaults).
        """
        batch = _as_prompt_list(prompts)
        params = _as_params_list(sampling, len(batch))
        token_prompts = [self.encode(p) if isinstance(p, str) else list(p) for p in batch]
        bar = _progress(len(batch)) if use_tqdm else None

        def on_output(out: RequestOutput) -> None:
            if out.finished and bar is not None:
                bar.update(1)

        try:
            outputs = run_to_completion(self.engine, zip(token_prompts, params), on_output=on_output)
        finally:
            if bar is not None:
                bar.close()
        for out in outputs:
            out.text = self.decode(out.token_ids)
        return outputs

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _as_prompt_list(prompts: Prompt | Sequence[Prompt]) -> list[Prompt]:
    if isinstance(prompts, str):
        return [prompts]
    prompts = list(prompts)
    if prompts and all(isinstance(t, int) for t in prompts):
        return [prompts]  # one flat list of token ids
    for i, p in enumerate(prompts):
        if not isinstance(p, str) and not (isinstance(p, Sequence) and all(isinstance(t, int) for t in p)):
            raise InvalidInputError(
                f"prompts[{i}] must be a string or a list of token ids, got {type(p).__name__}", field="prompts"
            )
    return prompts


def _as_params_list(sampling: SamplingParams | Sequence[SamplingParams] | None, n: int) -> list[SamplingParams]:
    if sampling is None:
        return [SamplingParams()] * n
    if isinstance(sampling, SamplingParams):
        return [sampling] * n
    params = list(sampling)
    if len(params) != n:
        raise InvalidInputError(f"got {n} prompts but {len(params)} SamplingParams; pass one or one per prompt",
                                field="sampling")
    for i, sp in enumerate(params):
        if not isinstance(sp, SamplingParams):
            raise InvalidInputError(f"sampling[{i}] must be a SamplingParams, got {type(sp).__name__}",
                                    field="sampling")
    return params


def _progress(total: int):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="generate", unit="req")
