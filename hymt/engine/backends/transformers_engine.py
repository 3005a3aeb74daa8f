"""TransformersEngine: plain `transformers` `generate()` behind the `Engine` interface.

This backend is the reference for correctness tests (batch 1, `batching="none"`) and the
baseline `hymt bench` compares against. It is deliberately simple: `step()` takes every
queued request and runs it to completion, so each call returns only finished outputs.
"""
from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import torch

from hymt.engine.devices import resolve_device
from hymt.engine.dtypes import resolve_dtype
from hymt.engine.interface import Engine, EngineStats
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, InvalidInputError, ModelLoadError

if TYPE_CHECKING:
    from hymt.checkpoint import CheckpointSource

Batching = Literal["none", "padded"]
BATCHING_CHOICES = ("none", "padded")


@dataclass
class _Pending:
    request_id: str
    prompt: list[int]
    params: SamplingParams
    arrival_time: float


class _FirstTokenClock:
    """A generate() streamer that records when the first new token exists.

    generate() calls `put` once with the prompt, then once per generated step; the second call
    is the first token. Only a timestamp is kept, so it works for any batch size.
    """

    def __init__(self) -> None:
        self._calls = 0
        self.first_token_time: float | None = None

    def put(self, value: torch.Tensor) -> None:
        self._calls += 1
        if self._calls == 2:
            self.first_token_time = time.perf_counter()

    def end(self) -> None:
        pass


class TransformersEngine(Engine):
    """Runs requests with `model.generate`, one at a time or in left-padded batches.

    Args:
        model: a `hymt.checkpoint.Checkpoint`, a checkpoint directory / hub id, or an
            already-built HF causal LM (then pass `stop_token_ids`).
        device: torch device; default CUDA when available, else CPU. Ignored for a built model.
        dtype: torch dtype or its name; default bfloat16 on CUDA, float32 on CPU.
        stop_token_ids: ids that end generation by default; default the checkpoint's eos ids.
        pad_token_id: id used for left padding; default the checkpoint's pad id, else 0.
        batching: "none" runs each request alone (the reference); "padded" groups requests
            with identical sampling settings into left-padded batches of `max_batch_size`.
        max_batch_size: largest padded batch.
    """

    def __init__(
        self,
        model: CheckpointSource | torch.nn.Module,
        *,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        stop_token_ids: Sequence[int] | None = None,
        pad_token_id: int | None = None,
        batching: Batching = "none",
        max_batch_size: int = 64,
    ):
        if batching not in BATCHING_CHOICES:
            raise InvalidInputError(f"batching must be one of {BATCHING_CHOICES}, got {batching!r}", field="batching")
        if not isinstance(max_batch_size, int) or max_batch_size < 1:
            raise InvalidInputError(f"max_batch_size must be a positive integer, got {max_batch_size!r}",
                                    field="max_batch_size")
        if isinstance(model, torch.nn.Module):
            self.model = model.eval()
            ckpt_stops: tuple[int, ...] = ()
            ckpt_pad = None
        else:
            from hymt.checkpoint import Checkpoint, load_checkpoint

            if not isinstance(model, (str, os.PathLike, Checkpoint)):
                raise InvalidInputError(f"model must be a Checkpoint, a path, a hub id or a torch model, "
                                        f"got {type(model).__name__}", field="model")
            checkpoint = load_checkpoint(model)
            self.model = load_hf_model(checkpoint.path, device=device, dtype=dtype)
            ckpt_stops = tuple(checkpoint.eos_token_ids)
            ckpt_pad = checkpoint.pad_token_id
        self.stop_token_ids = tuple(int(t) for t in (stop_token_ids if stop_token_ids is not None else ckpt_stops))
        self.pad_token_id = int(pad_token_id if pad_token_id is not None else (ckpt_pad if ckpt_pad is not None else 0))
        self.batching: Batching = batching
        self.max_batch_size = max_batch_size
        self.device = next(self.model.parameters()).device
        # An id the LM head can never produce: "eos" for requests that ignore eos, because
        # eos_token_id=None would make generate() fall back to the checkpoint's eos ids.
        self._never_id = max(int(self.model.config.vocab_size), self.model.get_output_embeddings().weight.shape[0])
        self._queue: dict[str, _Pending] = {}
        self._ids = itertools.count()
        self._prompt_tokens = 0
        self._generated_tokens = 0
        self._generation_steps = 0

    # -- Engine interface -------------------------------------------------------------------

    def add_request(
        self, prompt_token_ids: Sequence[int], params: SamplingParams, request_id: str | None = None, *,
        final_only: bool = False,
    ) -> str:
        # Every output of this engine is a final one: final_only changes nothing.
        prompt = [int(t) for t in prompt_token_ids]
        if not prompt:
            raise InvalidInputError("prompt_token_ids must not be empty", field="prompt_token_ids")
        if not isinstance(params, SamplingParams):
            raise InvalidInputError(f"params must be a SamplingParams, got {type(params).__name__}", field="params")
        rid = request_id if request_id is not None else f"tf-{next(self._ids)}"
        if rid in self._queue:
            raise InvalidInputError(f"request_id {rid!r} is already queued", field="request_id")
        self._queue[rid] = _Pending(rid, prompt, params, time.perf_counter())
        return rid

    def step(self) -> list[RequestOutput]:
        """Run every queued request to completion; returns their finished outputs."""
        pending = list(self._queue.values())
        self._queue.clear()
        outputs: list[RequestOutput] = []
        for group in self._groups(pending):
            outputs.extend(self._run(group))
        return outputs

    def abort(self, request_id: str) -> None:
        self._queue.pop(request_id, None)

    def has_unfinished(self) -> bool:
        return bool(self._queue)

    def stats(self) -> EngineStats:
        mem = torch.cuda.memory_allocated(self.device) if self.device.type == "cuda" else 0
        return EngineStats(
            num_waiting=len(self._queue),
            gpu_memory_bytes=int(mem),
            generated_tokens_total=self._generated_tokens,
            generation_steps_total=self._generation_steps,
            prompt_tokens_total=self._prompt_tokens,
        )

    def device_name(self) -> str:
        return str(self.device)

    def close(self) -> None:
        self._queue.clear()

    # -- internals --------------------------------------------------------------------------

    def _groups(self, pending: list[_Pending]) -> list[list[_Pending]]:
        """Batches for generate(): singletons, or requests whose generate() kwargs agree."""
        if self.batching == "none":
            return [[p] for p in pending]
        by_key: dict[tuple, list[_Pending]] = {}
        for p in pending:
            # One generate() call shares its sampling settings and seed across the batch.
            by_key.setdefault(self._kwargs_key(p.params), []).append(p)
        groups: list[list[_Pending]] = []
        for members in by_key.values():
            for i in range(0, len(members), self.max_batch_size):
                groups.append(members[i : i + self.max_batch_size])
        return groups

    def _kwargs_key(self, params: SamplingParams) -> tuple:
        kwargs = self.generate_kwargs(params)
        return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in kwargs.items())) + (params.seed,)

    def generate_kwargs(self, params: SamplingParams) -> dict[str, Any]:
        """generate() arguments for `params`, every field explicit so the checkpoint's
        generation_config.json (official sampling defaults) never leaks into a request."""
        stops = list(params.effective_stop_ids(self.stop_token_ids)) or [self._never_id]
        kwargs: dict[str, Any] = {
            "max_new_tokens": params.max_tokens,
            "min_new_tokens": 0,
            "eos_token_id": stops,
            "pad_token_id": self.pad_token_id,
            "num_beams": 1,
            "repetition_penalty": params.repetition_penalty,
            "do_sample": not params.greedy,
        }
        if params.greedy:
            # transformers' neutral values: they silence the "only used in sampling" warnings
            # that the checkpoint's sampling defaults would otherwise raise.
            kwargs.update(temperature=1.0, top_k=50, top_p=1.0)
        else:
            kwargs.update(temperature=params.temperature, top_k=max(params.top_k, 0), top_p=params.top_p)
        return kwargs

    def _run(self, group: list[_Pending]) -> list[RequestOutput]:
        params = group[0].params
        input_ids, attention_mask = self._left_pad([p.prompt for p in group])
        clock = _FirstTokenClock()
        if params.seed is not None:
            torch.manual_seed(params.seed)
        try:
            with torch.inference_mode():
                out = self.model.generate(
                    input_ids=input_ids, attention_mask=attention_mask, streamer=clock,
                    **self.generate_kwargs(params),
                )
        except torch.cuda.OutOfMemoryError as exc:
            raise EngineError(
                f"transformers generate() ran out of GPU memory on a batch of {len(group)}: {exc}"
            ) from exc
        except (RuntimeError, ValueError) as exc:
            raise EngineError(f"transformers generate() failed: {exc}") from exc
        finish = time.perf_counter()
        new = out[:, input_ids.shape[1] :].tolist()  # [batch, steps]
        self._generation_steps += out.shape[1] - input_ids.shape[1]
        stops = set(params.effective_stop_ids(self.stop_token_ids))
        results = []
        for pending, row in zip(group, new):
            results.append(self._output(pending, row, stops, clock.first_token_time or finish, finish))
        return results

    def _output(self, pending: _Pending, row: list[int], stops: set[int], first: float, finish: float) -> RequestOutput:
        # Rows of a batch run until the longest finishes; cut at the first stop id (the
        # padding generate() writes after it is meaningless).
        tokens, reason = [], "length"
        for tok in row[: pending.params.max_tokens]:
            if tok in stops:
                reason = "stop"
                break
            tokens.append(tok)
        self._prompt_tokens += len(pending.prompt)
        self._generated_tokens += len(tokens)
        return RequestOutput(
            request_id=pending.request_id, prompt_token_ids=pending.prompt, token_ids=tokens,
            new_token_ids=list(tokens), finished=True, finish_reason=reason,
            arrival_time=pending.arrival_time, first_token_time=first, finish_time=finish,
        )

    def _left_pad(self, prompts: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), self.pad_token_id, dtype=torch.long)  # [batch, width]
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for i, p in enumerate(prompts):
            ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long)
            mask[i, width - len(p) :] = 1
        return ids.to(self.device), mask.to(self.device)



def load_hf_model(path: str | Path, *, device=None, dtype=None) -> torch.nn.Module:
    """The transformers model of a checkpoint directory, on `device` in `dtype`, in eval mode."""
    from transformers import AutoModelForCausalLM

    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    try:
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dt)
    except (OSError, ValueError, KeyError, ImportError) as exc:
        raise ModelLoadError(f"transformers could not load the checkpoint at {path}: {exc}") from exc
    return model.to(dev).eval()
