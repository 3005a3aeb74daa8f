"""Sampler against a per-row plain-Python reference of each transform."""
import math

import numpy as np
import pytest
import torch

from hymt.engine.sampler import (
    Sampler,
    apply_repetition_penalty,
    counter_uniform,
    filter_top_k_top_p,
    inverse_cdf_sample,
)
from hymt.engine.sampling import SamplingParams
from hymt.engine.sequence import Sequence

V = 50
_ids = iter(range(10**6))


def seq(tokens=(1, 2, 3), seed=None, outputs=(), **params) -> Sequence:
    i = next(_ids)
    s = Sequence(i, f"r{i}", list(tokens), SamplingParams(seed=seed, **params), seed=seed if seed is not None else i)
    s.token_ids.extend(outputs)
    s.num_pending = 1  # as the scheduler leaves it: the token being sampled is planned
    return s


# -- reference implementations, one row at a time --------------------------------------------
def ref_penalty(row: list[float], seen: set[int], p: float) -> list[float]:
    return [(x / p if x > 0 else x * p) if i in seen else x for i, x in enumerate(row)]


def ref_kept(row: list[float], top_k: int, top_p: float) -> list[int]:
    """Token ids kept by top-k then top-p, most likely first."""
    order = sorted(range(len(row)), key=lambda i: -row[i])
    if 0 < top_k < len(row):
        order = order[:top_k]
    m = max(row[i] for i in order)
    weights = [math.exp(row[i] - m) for i in order]
    total = sum(weights)
    kept, mass = [], 0.0
    for i, w in zip(order, weights):
        if kept and mass >= top_p:
            break
        kept.append(i)
        mass += w / total
    return kept


def ref_probs(row: list[float], temperature: float, top_k: int, top_p: float) -> dict[int, float]:
    scaled = [x / temperature for x in row]
    kept = ref_kept(scaled, top_k, top_p)
    m = max(scaled[i] for i in kept)
    w = {i: math.exp(scaled[i] - m) for i in kept}
    total = sum(w.values())
    return {i: v / total for i, v in w.items()}


def ref_pick(probs: dict[int, float], u: float) -> int:
    """Inverse CDF over the kept tokens, most likely first."""
    acc = 0.0
    for i, p in sorted(probs.items(), key=lambda kv: -kv[1]):
        acc += p
        if u < acc:
            return i
    return max(probs, key=probs.get)


@pytest.fixture
def logits() -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    return torch.randn(6, V, generator=g) * 3


def test_repetition_penalty_matches_reference(logits):
    seen_sets = [{0, 1, 2}, set(), {5, 49}, set(range(V)), {7}, {3}]
    seen = torch.zeros(6, V, dtype=torch.bool)
    for r, ids in enumerate(seen_sets):
        seen[r, list(ids)] = True
    pen = torch.tensor([1.2, 1.5, 0.8, 1.05, 2.0, 1.0])
    got = apply_repetition_penalty(logits, seen, pen)
    for r in range(6):
        want = ref_penalty(logits[r].tolist(), seen_sets[r], float(pen[r]))
        assert got[r].tolist() == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("top_k,top_p", [(5, 1.0), (0, 0.6), (20, 0.6), (1, 1.0), (0, 0.05), (50, 0.9)])
def test_top_k_top_p_keep_the_reference_set(logits, top_k, top_p):
    k = torch.full((6,), top_k if 0 < top_k < V else V)
    values, indices = filter_top_k_top_p(
        logits, k, torch.full((6,), top_p), k_max=int(k.max()), need_top_p=top_p < 1.0
    )
    for r in range(6):
        kept = [int(i) for i, v in zip(indices[r], values[r]) if v != float("-inf")]
        assert kept == ref_kept(logits[r].tolist(), top_k, top_p)


def test_mixed_rows_filter_independently(logits):
    k = torch.tensor([3, V, 10, V, 1, 7])
    p = torch.tensor([1.0, 0.5, 0.8, 1.0, 1.0, 0.3])
    values, indices = filter_top_k_top_p(logits, k, p, k_max=V, need_top_p=True)
    for r in range(6):
        kept = [int(i) for i, v in zip(indices[r], values[r]) if v != float("-inf")]
        assert kept == ref_kept(logits[r].tolist(), int(k[r]) % V, float(p[r]))


def test_inverse_cdf_matches_reference_pick(logits):
    probs = logits.softmax(-1)
    values, indices = logits.sort(-1, descending=True)
    for u in (0.0, 0.1, 0.5, 0.93, 0.99):  # fp32 CDF: no finer than ~1e-6
        choice = inverse_cdf_sample(values, torch.full((6,), u))
        got = indices.gather(1, choice[:, None]).squeeze(1)
        for r in range(6):
            ref = ref_pick(dict(enumerate(probs[r].tolist())), u)
            assert int(got[r]) == ref


def test_sample_follows_reference_for_every_transform(logits):
    seqs = [
        seq(tokens=[1, 2], temperature=0.7, top_k=20, top_p=0.6, repetition_penalty=1.05, seed=1),
        seq(tokens=[4], temperature=1.0, seed=2),
        seq(tokens=[9, 10, 11], temperature=1.3, top_k=5, seed=3),
        seq(tokens=[0], temperature=0.5, top_p=0.9, seed=4, outputs=[30, 31]),
        seq(tokens=[5, 6], temperature=0.0, repetition_penalty=1.3, seed=5),  # greedy with penalty
        seq(tokens=[7], temperature=0.9, top_k=3, top_p=0.5, repetition_penalty=0.9, seed=6),
    ]
    sampler = Sampler(V, 8, "cpu")
    got = sampler.sample(logits.clone(), seqs).tolist()
    us = counter_uniform(np.array([s.seed for s in seqs], np.uint64), np.array([s.num_generated - 1 for s in seqs]))
    for r, s in enumerate(seqs):
        p = s.params
        row = ref_penalty(logits[r].tolist(), set(s.token_ids), p.repetition_penalty)
        if p.temperature == 0:
            assert got[r] == max(range(V), key=lambda i: row[i])
        else:
            probs = ref_probs(row, p.temperature, p.top_k, p.top_p)
            assert got[r] == ref_pick(probs, float(np.float32(us[r])))


def test_all_greedy_fast_path_is_argmax(logits):
    sampler = Sampler(V, 8, "cpu")
    seqs = [seq() for _ in range(6)]
    assert sampler.sample(logits, seqs).tolist() == logits.argmax(-1).tolist()


def test_penalty_state_follows_generated_tokens():
    """A token sampled at one step is penalised at the next (device-side seen table)."""
    sampler = Sampler(V, 4, "cpu")
    s = seq(tokens=[1], temperature=0.0, repetition_penalty=100.0)
    row = torch.zeros(1, V)
    row[0, 10], row[0, 11] = 5.0, 4.0
    assert sampler.sample(row.clone(), [s]).tolist() == [10]
    s.token_ids.append(10)
    assert sampler.sample(row.clone(), [s]).tolist() == [11]  # 10 now seen: 5/100 < 4
    sampler.release(s.seq_id)
    fresh = seq(tokens=[1], temperature=0.0, repetition_penalty=100.0)
    assert sampler.sample(row.clone(), [fresh]).tolist() == [10]  # a reused row starts clean


def test_seeded_sampling_ignores_batch_composition(logits):
    def draw(batch_rows, order):
        sampler = Sampler(V, 16, "cpu")
        seqs = [seq(tokens=[3], temperature=1.0, top_p=0.95, seed=100 + r) for r in batch_rows]
        picked = [seqs[i] for i in order]
        out = sampler.sample(logits[[batch_rows[i] for i in order]].clone(), picked).tolist()
        return {batch_rows[i]: t for i, t in zip(order, out)}

    alone = draw([2], [0])
    mixed = draw([0, 1, 2, 3], [3, 2, 0, 1])
    assert mixed[2] == alone[2]
    assert draw([0, 1, 2, 3], [0, 1, 2, 3]) == mixed


def test_seeded_sampling_distribution_matches_probabilities():
    row = torch.tensor([[2.0, 1.0, 0.0, -1.0, -3.0]])
    want = torch.softmax(row[0] / 0.8, -1)
    sampler = Sampler(5, 2, "cpu")
    counts = [0] * 5
    s = seq(tokens=[0], temperature=0.8, seed=1234)
    n = 4000
    for step in range(n):
        s.token_ids = [0] + [1] * step  # the step index feeds the counter-based draw
        counts[int(sampler.sample(row, [s])[0])] += 1
    freq = torch.tensor(counts, dtype=torch.float32) / n
    assert torch.allclose(freq, want, atol=0.025), (freq, want)


def test_counter_uniform_is_a_pure_function():
    a = counter_uniform(np.array([1, 2, 3], np.uint64), np.array([0, 0, 5]))
    b = counter_uniform(np.array([3, 1], np.uint64), np.array([5, 0]))
    assert a[0] == b[1] and a[2] == b[0]
    assert a[0] != a[1]
    many = counter_uniform(np.arange(20000, dtype=np.uint64), np.zeros(20000))
    assert 0.0 <= many.min() and many.max() < 1.0 and abs(many.mean() - 0.5) < 0.01


def test_different_seeds_give_different_samples(logits):
    flat = torch.zeros(1, V)  # uniform distribution
    picks = {int(Sampler(V, 2, "cpu").sample(flat, [seq(temperature=1.0, seed=s)])[0]) for s in range(40)}
    assert len(picks) > 10


def test_each_sequence_is_penalised_for_its_own_tokens_only():
    """Prompt tokens and sampled ones land in the sequence's own row of the seen table, also
    when only part of the batch has a penalty."""
    sampler = Sampler(V, 4, "cpu")
    a = seq(tokens=[10], temperature=0.0, repetition_penalty=100.0)
    b = seq(tokens=[11], temperature=0.0, repetition_penalty=100.0)
    plain = seq(tokens=[10, 11], temperature=0.0)
    row = torch.zeros(3, V)
    row[:, 10], row[:, 11], row[:, 12] = 5.0, 4.0, 3.0
    assert sampler.sample(row.clone(), [a, b, plain]).tolist() == [11, 10, 10]
    a.token_ids.append(11)
    b.token_ids.append(10)
    plain.token_ids.append(10)
    assert sampler.sample(row.clone(), [a, b, plain]).tolist() == [12, 12, 10]
