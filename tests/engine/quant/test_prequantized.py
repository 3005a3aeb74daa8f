"""Pre-quantized checkpoints (GPTQ int4, compressed-tensors fp8) load as they are published.

hymt.testing.quantized writes tiny checkpoints in each format from the same seed-0 float
weights; load_model reads them back on CPU in float32. Checked: the stored values land in
the right rows exactly, within the format's error bound of the float weights, the whole
model computes what a float model on those values computes, greedy generation through the
native engine works, and bad checkpoints fail with errors naming what is wrong.
"""
from __future__ import annotations

import json
import random
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.config import EngineConfig
from hymt.engine.loader import load_model
from hymt.engine.native_engine import NativeEngine
from hymt.engine.network import allocate_kv_cache
from hymt.engine.quant.fp8_weights import dequantize_fp8_rows, quantize_fp8_rows
from hymt.engine.quant.int_weights import dequantize_int, quantize_int
from hymt.engine.sampling import SamplingParams
from hymt.engine.step_inputs import build_step_inputs
from hymt.errors import InvalidInputError, ModelLoadError
from hymt.testing import tiny_state_dict, write_tiny_checkpoint
from hymt.testing.quantized import WRITERS, Fp8Writer, GptqWriter, fp8_quantize

FAMILY = "HY-MT1.5-1.8B"
BLOCK = 4
NAMES = sorted(WRITERS)


@pytest.fixture(scope="module")
def float_state() -> dict:
    return tiny_state_dict(FAMILY, 0)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """name -> directory of the pre-quantized tiny checkpoint (written once per module)."""
    cache = {}

    def get(name: str):
        if name not in cache:
            cache[name] = write_tiny_checkpoint(tmp_path_factory.mktemp(name), FAMILY, quantization=name)
        return cache[name]

    return get


@pytest.fixture(scope="module")
def float_checkpoint(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("float"), FAMILY)


def loaded_form(name: str, state: dict) -> dict[str, torch.Tensor]:
    """The float weights the loader must reproduce: the writer's values, and where the loader
    has to re-quantize (act-order GPTQ, fp8 layers the checkpoint keeps in float) our own
    round-to-nearest of them (group 32 int4 / per-row fp8, float32 scales)."""
    writer = WRITERS[name]
    out = writer.dequantized(state)
    for key, w in out.items():
        if isinstance(writer, GptqWriter) and writer.desc_act:
            out[key] = dequantize_int(quantize_int(w, 4, writer.group_size, torch.float32), torch.float32)
        elif isinstance(writer, Fp8Writer) and writer.kept_float(key):
            out[key] = dequantize_fp8_rows(*quantize_fp8_rows(w), torch.float32)
    return out


@pytest.fixture(scope="module")
def dequantized_checkpoint(tmp_path_factory, float_state):
    """name -> a float checkpoint whose projections hold loaded_form(name): the reference."""
    cache = {}

    def get(name: str):
        if name not in cache:
            directory = write_tiny_checkpoint(tmp_path_factory.mktemp(f"{name}-dequantized"), FAMILY)
            save_file(float_state | loaded_form(name, float_state), str(directory / "model.safetensors"))
            cache[name] = directory
        return cache[name]

    return get


def fused_projections(model):
    """(quantized module, the HF weight names filling its rows in order) for every projection."""
    for i, layer in enumerate(model.layers):
        p = f"model.layers.{i}."
        attn, mlp = layer.self_attn, layer.mlp
        yield attn.qkv_proj, [p + f"self_attn.{x}_proj.weight" for x in "qkv"]
        yield attn.o_proj, [p + "self_attn.o_proj.weight"]
        yield mlp.gate_up_proj, [p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"]
        yield mlp.down_proj, [p + "mlp.down_proj.weight"]


def error_bound(name: str, module, names: list[str], state: dict) -> torch.Tensor:
    """Per-weight bound of |loaded - float| that the format allows.

    int4 round-to-nearest: scale/2 per weight, plus 15 x the fp16 rounding of the scale
    (<= 2^-11 relative) where the top / bottom of a group clamps: scale * (1/2 + 2^-7).
    Act-order re-quantization adds our own scale/2 (float32 scales).
    fp8 e4m3 (3 mantissa bits): |x - q| <= 2^-4 |x| for normal values and 2^-10 for
    subnormal ones, x = w / scale: |w - w'| <= 2^-4 |w| + 2^-10 scale (+ float32 rounding).
    """
    w = torch.cat([state[n] for n in names]).float()
    writer = WRITERS[name]
    if isinstance(writer, Fp8Writer):
        scale = module.weight_scale.float()[:, None]  # [N, 1]
        return 2**-4 * w.abs() + 2**-10 * scale + 1e-6 * w.abs()
    gptq = [writer.quantize(n, state[n]) for n in names]
    scale = torch.cat([g.scales.float()[:, g.g_idx] for g in gptq])  # [N, K]
    bound = scale * (0.5 + 2**-7) + 1e-6
    if writer.desc_act:
        bound = bound + module.scales.float().repeat_interleave(module.group_size, dim=1) / 2
    return bound


@pytest.mark.parametrize("name", NAMES)
def test_projections_hold_the_checkpoint_values(name, checkpoint, float_state):
    model = load_model(checkpoint(name), device="cpu")
    want = loaded_form(name, float_state)
    expected_type = "Fp8Linear" if name.startswith("fp8") else "IntWeightLinear"
    for module, names in fused_projections(model):
        assert type(module).__name__ == expected_type
        got = module.dequantized_weight(torch.float32)
        assert torch.equal(got, torch.cat([want[n] for n in names])), names
        float_w = torch.cat([float_state[n] for n in names])
        err = (got - float_w).abs()
        assert (err <= error_bound(name, module, names, float_state)).all(), names
        assert err.max() > 0  # really quantized


def test_ignored_layer_is_stored_in_float_and_quantized_at_load(checkpoint, float_state):
    stored = load_file(str(checkpoint("fp8-per-tensor") / "model.safetensors"))
    config = json.loads((checkpoint("fp8-per-tensor") / "config.json").read_text())["quantization_config"]
    assert "ignore" in config and "ignored_layers" not in config  # llm-compressor's key; "fp8" uses Tencent's
    assert stored["model.layers.1.mlp.down_proj.weight"].dtype == torch.float32
    assert stored["model.layers.0.mlp.down_proj.weight"].dtype == torch.float8_e4m3fn
    model = load_model(checkpoint("fp8-per-tensor"), device="cpu")
    down = model.layers[1].mlp.down_proj
    q, scale = quantize_fp8_rows(float_state["model.layers.1.mlp.down_proj.weight"])
    assert torch.equal(down.weight.data, q) and torch.equal(down.weight_scale.data, scale.reshape(-1))


def prefill_logits(model, seqs: list[list[int]]) -> torch.Tensor:
    """Teacher-forced logits of every position of each sequence, one prefill step."""
    caches = allocate_kv_cache(model, 256, BLOCK, torch.float32, "cpu")
    scheduled, next_block = [], 0
    for i, ids in enumerate(seqs):
        blocks = -(-len(ids) // BLOCK)
        scheduled.append(ScheduledSeq(i, list(ids), 0, list(range(next_block, next_block + blocks)), True))
        next_block += blocks
    inputs = build_step_inputs(StepBatch(scheduled), BLOCK, "cpu", all_logits=True)
    with torch.no_grad():
        hidden = model(inputs.input_ids, inputs.metadata, caches)
        return model.compute_logits(hidden[inputs.metadata.logits_indices])


def prompts(vocab: int, n: int = 6) -> list[list[int]]:
    rng = random.Random(0)
    return [[rng.randrange(vocab) for _ in range(rng.randrange(5, 21))] for _ in range(n)]


def reference_model(name: str, dequantized_checkpoint, state: dict):
    """What the pre-quantized model must equal, built without its checkpoint or handler.

    GPTQ: a float model on the dequantized weights (int4 layers multiply by exactly those).
    fp8: Fp8Linear also rounds activations per token at run time, so the reference has fp8
    layers too, given the writer's e4m3 values and scales row by row through their public
    load_quantized_rows (layers the checkpoint keeps in float: load_float_rows).
    """
    writer = WRITERS[name]
    if isinstance(writer, GptqWriter):
        return load_model(dequantized_checkpoint(name), device="cpu")
    model = load_model(dequantized_checkpoint(name), device="cpu", quantization="fp8")
    for module, names in fused_projections(model):
        start = 0
        for n in names:
            if writer.kept_float(n):
                module.load_float_rows(start, state[n])
            else:
                module.load_quantized_rows(start, *fp8_quantize(state[n], per_tensor=writer.per_tensor))
            start += state[n].shape[0]
    return model


@pytest.mark.parametrize("name", NAMES)
def test_logits_equal_the_reference_model(name, checkpoint, dequantized_checkpoint, float_state):
    quantized = load_model(checkpoint(name), device="cpu")
    reference = reference_model(name, dequantized_checkpoint, float_state)
    seqs = prompts(quantized.vocab_size)
    # Same operands, same ops: equal up to float32 rounding.
    torch.testing.assert_close(prefill_logits(quantized, seqs), prefill_logits(reference, seqs),
                               rtol=1e-5, atol=1e-5)


def test_fp8_checkpoint_equals_fp8_quantization_at_load(checkpoint, float_checkpoint):
    """Per-channel amax / 448 is also what quantization='fp8' computes: identical models."""
    pre = load_model(checkpoint("fp8"), device="cpu")
    own = load_model(float_checkpoint, device="cpu", quantization="fp8")
    seqs = prompts(pre.vocab_size)
    assert torch.equal(prefill_logits(pre, seqs), prefill_logits(own, seqs))


def greedy(directory, seqs, max_tokens: int = 10, quantization=None) -> list[list[int]]:
    config = EngineConfig(max_num_seqs=8, max_num_batched_tokens=256, max_model_len=64, block_size=BLOCK,
                          num_kv_blocks=128, enable_prefix_caching=False, quantization=quantization)
    engine = NativeEngine(directory, config, device="cpu", dtype=torch.float32)
    params = SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    return [o.token_ids for o in engine.generate(seqs, params)]


# Top-1 agreement with the float model, teacher-forced on its greedy continuations (16
# prompts, 360 positions). Measured on the tiny model (large random weights, so logits are
# fragile; chance is 1/451): gptq-int4 0.54, gptq-int4-v2 0.55, act-order 0.44 (rounded twice),
# fp8 0.84, fp8-per-tensor 0.83; quantizing the float checkpoint at load gives int4 0.54,
# fp8 0.84. Asserted: no worse than the at-load scheme by more than the margin below.
AGREEMENT_MARGIN = {"gptq-int4-act-order": 0.15}
DEFAULT_MARGIN = 0.05


def top1_agreement(model, reference_top: torch.Tensor, seqs) -> float:
    return (prefill_logits(model, seqs).argmax(-1) == reference_top).float().mean().item()


@pytest.mark.parametrize("name", NAMES)
def test_greedy_generation_from_the_prequantized_checkpoint(name, checkpoint, float_checkpoint,
                                                            dequantized_checkpoint):
    directory = checkpoint(name)
    float_model = load_model(float_checkpoint, device="cpu")
    seqs = prompts(float_model.vocab_size, 16)
    got = greedy(directory, seqs)
    assert all(len(t) == 10 for t in got)
    if name.startswith("gptq"):  # same logits as the float model on the dequantized weights
        assert got == greedy(dequantized_checkpoint(name), seqs)
    elif name == "fp8":  # same weights as quantization="fp8" of the float checkpoint
        assert got == greedy(float_checkpoint, seqs, quantization="fp8")
    full = [s + t for s, t in zip(seqs, greedy(float_checkpoint, seqs))]
    top_float = prefill_logits(float_model, full).argmax(-1)
    agreement = top1_agreement(load_model(directory, device="cpu"), top_float, full)
    scheme = "int4" if name.startswith("gptq") else "fp8"
    at_load = top1_agreement(load_model(float_checkpoint, device="cpu", quantization=scheme), top_float, full)
    assert agreement >= at_load - AGREEMENT_MARGIN.get(name, DEFAULT_MARGIN), (agreement, at_load)
    assert agreement > 0.3, agreement


# -- bad checkpoints --------------------------------------------------------------------------

def copy_of(checkpoint, name: str, tmp_path):
    directory = tmp_path / name
    shutil.copytree(checkpoint(name), directory)
    return directory


def edit_quantization_config(directory, **changes) -> None:
    path = directory / "config.json"
    config = json.loads(path.read_text())
    config["quantization_config"].update(changes)
    path.write_text(json.dumps(config))


def rewrite_tensors(directory, mutate) -> None:
    path = str(directory / "model.safetensors")
    tensors = load_file(path)
    mutate(tensors)
    save_file(tensors, path)


@pytest.mark.parametrize("name", ["gptq-int4", "fp8"])
def test_pieces_arriving_in_any_order_and_shard(name, checkpoint, float_state, tmp_path):
    """Scales and zeros in the first shard, packed weights in the second."""
    directory = copy_of(checkpoint, name, tmp_path)
    tensors = load_file(str(directory / "model.safetensors"))
    (directory / "model.safetensors").unlink()
    first = {n for n in tensors if n.endswith(("scale", "scales", "qzeros", "g_idx"))}
    shards = {"model-00001-of-00002.safetensors": first, "model-00002-of-00002.safetensors": set(tensors) - first}
    for file, names in shards.items():
        save_file({n: tensors[n] for n in names}, str(directory / file))
    index = {"weight_map": {n: file for file, names in shards.items() for n in names}}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index))
    model = load_model(directory, device="cpu")
    want = loaded_form(name, float_state)
    for module, names in fused_projections(model):
        assert torch.equal(module.dequantized_weight(torch.float32), torch.cat([want[n] for n in names]))


def test_gptq_without_g_idx_loads_when_groups_are_in_natural_order(checkpoint, float_state, tmp_path):
    directory = copy_of(checkpoint, "gptq-int4", tmp_path)
    rewrite_tensors(directory, lambda t: [t.pop(n) for n in list(t) if n.endswith(".g_idx")])
    model = load_model(directory, device="cpu")
    want = loaded_form("gptq-int4", float_state)
    module, names = next(fused_projections(model))
    assert torch.equal(module.dequantized_weight(torch.float32), torch.cat([want[n] for n in names]))


def test_gptq_group_size_minus_one_is_one_group_over_k(tmp_path, monkeypatch, float_state):
    monkeypatch.setitem(WRITERS, "gptq-int4-one-group", GptqWriter(group_size=-1, sym=False,
                                                                   checkpoint_format="gptq_v2"))
    model = load_model(write_tiny_checkpoint(tmp_path, FAMILY, quantization="gptq-int4-one-group"), device="cpu")
    want = WRITERS["gptq-int4-one-group"].dequantized(float_state)
    for module, names in fused_projections(model):
        assert module.group_size == module.in_features and module.scales.shape[1] == 1
        assert torch.equal(module.dequantized_weight(torch.float32), torch.cat([want[n] for n in names]))


def test_vllm_fp8_config_reads_the_same_tensors(checkpoint, float_state, tmp_path):
    """quant_method "fp8" (vLLM's serialized per-tensor fp8) names its tensors the same way."""
    directory = copy_of(checkpoint, "fp8-per-tensor", tmp_path)
    config = json.loads((directory / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "fp8", "activation_scheme": "static",
                                     "ignored_layers": ["lm_head", "model.layers.1.mlp.down_proj"]}
    (directory / "config.json").write_text(json.dumps(config))
    model = load_model(directory, device="cpu")
    want = loaded_form("fp8-per-tensor", float_state)
    for module, names in fused_projections(model):
        assert torch.equal(module.dequantized_weight(torch.float32), torch.cat([want[n] for n in names]))
    edit_quantization_config(directory, weight_block_size=[128, 128])
    with pytest.raises(ModelLoadError, match=r"block scales.*supported: fp8"):
        load_model(directory, device="cpu")


@pytest.mark.parametrize(("name", "tensor"), [
    ("gptq-int4", "model.layers.1.self_attn.k_proj.qzeros"),
    ("gptq-int4-v2", "model.layers.0.mlp.up_proj.qweight"),
    ("gptq-int4-act-order", "model.layers.0.mlp.up_proj.g_idx"),
    ("fp8", "model.layers.1.self_attn.v_proj.weight_scale"),
    ("fp8-per-tensor", "model.layers.0.mlp.gate_proj.weight"),
])
def test_a_missing_tensor_is_named(name, tensor, checkpoint, tmp_path):
    directory = copy_of(checkpoint, name, tmp_path)
    rewrite_tensors(directory, lambda t: t.pop(tensor))
    with pytest.raises(ModelLoadError, match=tensor.replace(".", r"\.")):
        load_model(directory, device="cpu")


@pytest.mark.parametrize(("name", "changes", "needle"), [
    ("gptq-int4", {"bits": 8}, r"bits 8 .*valid: 4"),
    ("gptq-int4", {"bits": 3}, r"bits 3 .*valid: 4"),
    ("gptq-int4", {"checkpoint_format": "marlin"}, r"checkpoint_format 'marlin'.*valid: gptq, gptq_v2"),
    ("gptq-int4", {"quant_method": "awq"}, r"quant_method 'awq'.*valid: 'gptq'.*'compressed-tensors'"),
    ("fp8", {"format": "pack-quantized"}, r"format pack-quantized.*supported: fp8"),
    ("fp8", {"config_groups": {"group_0": {"weights": {"type": "int", "num_bits": 8, "strategy": "channel"}}}},
     r"type 'int', num_bits 8.*supported: fp8"),
    ("fp8", {"config_groups": {"group_0": {"weights": {"type": "float", "num_bits": 8, "strategy": "block"}}}},
     r"strategy 'block'.*supported: .*'channel' or 'tensor'"),
])
def test_unsupported_quantization_configs_are_refused(name, changes, needle, checkpoint, tmp_path):
    directory = copy_of(checkpoint, name, tmp_path)
    edit_quantization_config(directory, **changes)
    with pytest.raises(ModelLoadError, match=needle):
        load_model(directory, device="cpu")


def test_block_scales_are_refused(checkpoint, tmp_path):
    directory = copy_of(checkpoint, "fp8", tmp_path)
    rewrite_tensors(directory, lambda t: t.update({
        "model.layers.0.self_attn.o_proj.weight_scale": torch.ones(2, 2)}))
    with pytest.raises(ModelLoadError, match=r"o_proj\.weight_scale of shape \(2, 2\)"):
        load_model(directory, device="cpu")


@pytest.mark.parametrize("name", ["gptq-int4", "fp8"])
def test_requantizing_a_prequantized_checkpoint_is_refused(name, checkpoint):
    with pytest.raises(InvalidInputError, match="already quantized") as e:
        load_model(checkpoint(name), device="cpu", quantization="int8")
    assert e.value.field == "quantization"


def test_a_gptq_checkpoint_runs_as_int4_and_refuses_another_scheme(checkpoint):
    default = load_model(checkpoint("gptq-int4"), device="cpu")
    assert default.quantization == "int4"  # tinygemm where the device runs it (not on CPU: the reference path)
    assert all(layer.kernel == "tinygemm" for layer in default.modules() if hasattr(layer, "kernel"))
    assert load_model(checkpoint("gptq-int4"), device="cpu", quantization="int4").quantization == "int4"
    with pytest.raises(InvalidInputError, match=r"cannot re-quantize it; valid: None or 'int4'"):
        load_model(checkpoint("gptq-int4"), device="cpu", quantization="int8")
