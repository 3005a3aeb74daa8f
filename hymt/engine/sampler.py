"""Next-token selection on the device, vectorised over the batch.

Order (as SamplingParams documents and HF applies it): repetition penalty -> temperature ->
top-k -> top-p -> sample. A batch where every row is greedy without penalty takes a single
argmax.

Randomness: each row draws ONE uniform number u = hash(seed, index of the token being
generated) on the host (splitmix64, counter-based), and picks the token by inverse CDF over
its filtered distribution. Why this and not a torch.Generator per row: the draw depends only
on the request's seed and its output position, so a seeded request gives the same tokens
whatever else shares its batch, after a preemption and recompute, on CPU and CUDA; it costs
one number per row (no per-row generator objects or kernel launches) and leaves no device RNG
state that CUDA graphs or batch order could perturb. Unseeded requests get a seed from the
engine's generator (EngineConfig.seed) at admission.

Repetition penalty needs the set of tokens each sequence has seen (prompt + output). Rebuilding
it from Python lists every step would cost O(batch * length) host work, so the sampler keeps a
device-side [max_num_seqs, vocab] bool table: a row is filled once from the sequence's tokens
when it first samples, then updated on the device with each sampled token (no host sync).
"""
from __future__ import annotations

from itertools import chain

import numpy as np
import torch

from hymt.engine.sequence import Sequence

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# Rows whose top_k is at most this use torch.topk instead of a full-vocabulary sort.
_TOPK_LIMIT = 1024


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser over uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def counter_uniform(seeds: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Uniform [0, 1) float64 per (seed, step) pair: a pure function of its inputs."""
    seeds = np.asarray(seeds, dtype=np.uint64)
    steps = np.asarray(steps, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = splitmix64(splitmix64(seeds) + steps)
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def apply_repetition_penalty(logits: torch.Tensor, seen: torch.Tensor, penalty: torch.Tensor) -> torch.Tensor:
    """HF semantics: over seen tokens, positive logits are divided by the penalty, negative multiplied.

    logits [N, V] float32, seen [N, V] bool, penalty [N] float32 -> new [N, V] tensor.
    """
    pen = penalty[:, None]
    factor = torch.where(logits > 0, 1.0 / pen, pen)
    return torch.where(seen, logits * factor, logits)


def filter_top_k_top_p(
    logits: torch.Tensor, top_k: torch.Tensor, top_p: torch.Tensor, *, k_max: int, need_top_p: bool
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Keep the top_k largest logits per row, then the smallest prefix reaching top_p.

    logits [N, V] (already temperature-scaled); top_k [N] int64 with V meaning "off";
    k_max = max(top_k), passed from the host to avoid a device sync; top_p [N] float32.
    Returns (values [N, K] sorted descending with removed entries -inf, indices [N, K] into
    the vocabulary); indices is None when nothing is filtered and values are the logits as given.
    """
    vocab = logits.shape[-1]
    if k_max >= vocab and not need_top_p:
        return logits, None
    if k_max <= _TOPK_LIMIT and k_max < vocab:
        values, indices = logits.topk(k_max, dim=-1)  # sorted descending
    else:
        values, indices = logits.sort(dim=-1, descending=True)
    cols = torch.arange(values.shape[-1], device=values.device)
    values = values.masked_fill(cols[None, :] >= top_k[:, None], float("-inf"))
    if need_top_p:
        probs = values.softmax(dim=-1)
        before = probs.cumsum(dim=-1) - probs  # mass strictly above each token
        values = values.masked_fill(before >= top_p[:, None], float("-inf"))
    return values, indices


def inverse_cdf_sample(values: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """Column index per row drawn from softmax(values) with the given uniforms [N] -> [N] int64."""
    probs = values.softmax(dim=-1)
    cdf = probs.cumsum(dim=-1)
    target = uniforms[:, None] * cdf[:, -1:]
    choice = torch.searchsorted(cdf, target, right=True).squeeze(-1)
    return choice.clamp_(max=values.shape[-1] - 1)


_U64 = (1 << 64) - 1


class Sampler:
    """Turns the runner's logits rows into token ids, one row per sampling sequence.

    Nothing here waits for the device: per-step host data reaches it through pinned memory
    with non-blocking copies (torch's pinned allocator keeps each buffer until its copy is
    done), so the engine can plan the next step while this one runs.
    """

    def __init__(self, vocab_size: int, max_rows: int, device: torch.device | str):
        self.vocab_size = vocab_size
        self.device = torch.device(device)
        self.max_rows = max_rows
        self._pin = self.device.type == "cuda"
        self._seen = torch.zeros(max_rows, vocab_size, dtype=torch.bool, device=self.device)  # [rows, V]
        # Written only through index_fill_ with a Python scalar: `seen[rows, ids] = True` copies
        # the value from pageable host memory, which waits for the device (measured on an H200:
        # half the engine loop's time, with repetition_penalty on, went to that wait).
        self._seen_flat = self._seen.view(-1)  # [rows * V]
        self._row_of: dict[int, int] = {}  # seq_id -> row of _seen
        self._free_rows = list(range(max_rows - 1, -1, -1))

    @property
    def state_bytes(self) -> int:
        return self._seen.numel() * self._seen.element_size()

    def release(self, seq_id: int) -> None:
        """Forget a sequence's penalty state (finished, aborted or preempted)."""
        row = self._row_of.pop(seq_id, None)
        if row is not None:
            self._free_rows.append(row)

    def sample(self, logits: torch.Tensor, seqs: list[Sequence]) -> torch.Tensor:
        """logits [N, V] float32 (row i belongs to seqs[i]) -> token ids [N] int64 on the device.

        Each sequence is sampled as the scheduler planned it: its token being generated is
        number `seq.num_generated - 1` (this step's token is already counted as pending).
        """
        if all(s.params.temperature == 0.0 and s.params.repetition_penalty == 1.0 for s in seqs):
            return logits.argmax(dim=-1)
        return self._sample_general(logits, seqs)

    def _sample_general(self, logits: torch.Tensor, seqs: list[Sequence]) -> torch.Tensor:
        n = len(seqs)
        vocab = logits.shape[-1]
        temperature, top_k_f, top_p, penalty, uniforms = self._gather_params(seqs).unbind(1)
        penalized = [i for i, s in enumerate(seqs) if s.params.repetition_penalty != 1.0]
        rows = idx = None
        if penalized:
            logits, rows, idx = self._penalize(logits, seqs, penalized, penalty)
        num_greedy = sum(1 for s in seqs if s.params.temperature == 0.0)
        if num_greedy == n:
            tokens = logits.argmax(dim=-1)
        else:
            scaled = logits / torch.where(temperature > 0, temperature, 1.0)[:, None]
            k_max = max(s.params.top_k if 0 < s.params.top_k < vocab else vocab for s in seqs)
            need_top_p = any(s.params.top_p < 1.0 for s in seqs)
            values, indices = filter_top_k_top_p(
                scaled, top_k_f.to(torch.int64), top_p, k_max=k_max, need_top_p=need_top_p
            )
            choice = inverse_cdf_sample(values, uniforms)
            tokens = choice if indices is None else indices.gather(1, choice[:, None]).squeeze(1)
            if num_greedy:
                tokens = torch.where(temperature == 0, logits.argmax(dim=-1), tokens)
        if rows is not None:
            picked = tokens if idx is None else tokens[idx]
            self._seen_flat.index_fill_(0, rows * self.vocab_size + picked, True)
        return tokens

    def _upload(self, array: np.ndarray) -> torch.Tensor:
        t = torch.from_numpy(array)
        if self._pin:
            t = t.pin_memory().to(self.device, non_blocking=True)
        return t

    def _gather_params(self, seqs: list[Sequence]) -> torch.Tensor:
        """[n, 5] on the device: temperature, top_k, top_p, repetition_penalty, uniform."""
        n = len(seqs)
        vocab = self.vocab_size
        host = np.empty((n, 5), dtype=np.float32)
        host[:, 0] = [s.params.temperature for s in seqs]
        host[:, 1] = [s.params.top_k if 0 < s.params.top_k < vocab else vocab for s in seqs]
        host[:, 2] = [s.params.top_p for s in seqs]
        host[:, 3] = [s.params.repetition_penalty for s in seqs]
        # Masked to 64 bits: numpy >= 2.5 refuses negative ints for uint64 (a profiling
        # sequence has generated nothing, so its step -1 wraps, as older numpy did).
        seeds = np.fromiter((s.seed & _U64 for s in seqs), dtype=np.uint64, count=n)
        steps = np.fromiter(((s.num_generated - 1) & _U64 for s in seqs), dtype=np.uint64, count=n)
        host[:, 4] = counter_uniform(seeds, steps)
        return self._upload(host)

    def _penalize(
        self, logits: torch.Tensor, seqs: list[Sequence], penalized: list[int], penalty: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Penalised logits, the _seen rows used, and the batch rows (None = all rows)."""
        rows = self._rows_for([seqs[i] for i in penalized])
        if len(penalized) == len(seqs):
            return apply_repetition_penalty(logits, self._seen[rows], penalty), rows, None
        idx = self._upload(np.asarray(penalized, dtype=np.int64))
        out = logits.clone()
        out[idx] = apply_repetition_penalty(logits[idx], self._seen[rows], penalty[idx])
        return out, rows, idx

    def _rows_for(self, seqs: list[Sequence]) -> torch.Tensor:
        """Row of _seen per sequence, registering (and filling) rows for new sequences."""
        row_of = self._row_of
        new = [s for s in seqs if s.seq_id not in row_of]
        if new:
            if len(new) > len(self._free_rows):
                raise RuntimeError(f"sampler has {self.max_rows} penalty rows; {len(row_of) + len(new)} needed")
            new_rows = np.empty(len(new), dtype=np.int64)
            for i, s in enumerate(new):
                row = self._free_rows.pop()
                row_of[s.seq_id] = row
                new_rows[i] = row
            # The row starts as the tokens the sequence has seen: prompt (+ outputs if recomputed).
            lengths = np.fromiter((len(s.token_ids) for s in new), dtype=np.int64, count=len(new))
            flat = np.fromiter(chain.from_iterable(s.token_ids for s in new), dtype=np.int64, count=int(lengths.sum()))
            fill = np.repeat(new_rows, lengths) * self.vocab_size + flat  # [total] flat indices of seen tokens
            self._seen.index_fill_(0, self._upload(new_rows), False)
            self._seen_flat.index_fill_(0, self._upload(fill), True)
        return self._upload(np.fromiter((row_of[s.seq_id] for s in seqs), dtype=np.int64, count=len(seqs)))
