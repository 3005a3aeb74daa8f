#!/usr/bin/env python3
"""Convert a hymt checkpoint (HF layout, HunYuanDenseV1ForCausalLM) to the peer's GGUF files.

    python tools/llamacpp/convert.py CKPT OUT_DIR --bin .peer/build-cuda/bin

writes OUT_DIR/model-f16.gguf with the vendored convert_hf_to_gguf.py (and the vendored
gguf-py), then OUT_DIR/model-q8_0.gguf and OUT_DIR/model-q4_k_m.gguf with llama-quantize.
Files that already exist are kept (delete them to convert again).

Two things of a random-weights checkpoint that the converter would refuse are bridged here,
in this process only, without touching the checkpoint:

* the converter names the pre-tokenizer by hashing how the tokenizer splits a fixed text and
  stops on a hash it does not know; hymt's test tokenizers are small BPEs of their own, so
  their hash is unknown. The pre-tokenizer only affects how llama.cpp splits text, and the
  benchmark sends token ids, so an unknown hash is named "hunyuan-dense" (the real models').
* with dynamic (NTK alpha) RoPE the converter writes a 256k context whatever the config says,
  and asserts that max_position_embeddings is 32k or 256k; a tiny test checkpoint has 2048,
  so it is converted from a staging folder whose config.json says 262144. Real-shape
  checkpoints already do, and the GGUF is the same either way.

The weights, vocabulary size and every shape come from the checkpoint unchanged.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SRC = Path(os.environ.get("PEER_DIR", ROOT / ".peer")) / "llama.cpp"
#: GGUF file stem -> llama-quantize type; the F16 file is the converter's own output.
QUANTS = {"q8_0": "Q8_0", "q4_k_m": "Q4_K_M"}
#: Modules the converter imports for a HunYuan dense checkpoint (yaml: gguf-py's metadata).
NEEDED_MODULES = ("numpy", "torch", "safetensors", "transformers", "yaml")
DYNAMIC_ROPE_CONTEXTS = (32 * 1024, 256 * 1024)


def check_modules() -> None:
    missing = [name for name in NEEDED_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        sys.exit(f"convert: missing Python modules {missing} (the vendored converter imports them)")


def stage_checkpoint(checkpoint: Path, staging: Path) -> Path:
    """The folder to convert: the checkpoint itself, or links to its files plus a config.json
    whose max_position_embeddings passes the converter's dynamic-RoPE check."""
    config = json.loads((checkpoint / "config.json").read_text())
    rope = config.get("rope_scaling") or config.get("rope_parameters") or {}
    rope_type = rope.get("rope_type", rope.get("type"))
    if rope_type != "dynamic" or config.get("max_position_embeddings") in DYNAMIC_ROPE_CONTEXTS:
        return checkpoint
    for item in checkpoint.iterdir():
        if item.name != "config.json":
            (staging / item.name).symlink_to(item.resolve())
    config["max_position_embeddings"] = DYNAMIC_ROPE_CONTEXTS[-1]
    (staging / "config.json").write_text(json.dumps(config, indent=2))
    return staging


def convert_f16(checkpoint: Path, outfile: Path, src: Path) -> None:
    """Run the vendored converter in this process, with the pre-tokenizer fallback above."""
    sys.path[:0] = [str(src), str(src / "gguf-py")]
    import convert_hf_to_gguf
    from conversion.hunyuan import HunYuanModel

    known_pre = HunYuanModel.get_vocab_base_pre

    def vocab_base_pre(self, tokenizer) -> str:
        try:
            return known_pre(self, tokenizer)
        except NotImplementedError:
            return "hunyuan-dense"

    HunYuanModel.get_vocab_base_pre = vocab_base_pre
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = stage_checkpoint(checkpoint, Path(tmp))
        sys.argv = ["convert_hf_to_gguf.py", str(model_dir), "--outtype", "f16", "--outfile", str(outfile)]
        convert_hf_to_gguf.main()


def quantize(binaries: Path, f16: Path, outfile: Path, qtype: str) -> None:
    cmd = [str(binaries / "llama-quantize"), str(f16), str(outfile), qtype]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path, help="hymt checkpoint dir (config.json, safetensors, tokenizer)")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--bin", type=Path, required=True, help="folder of the built llama-quantize")
    parser.add_argument("--src", type=Path, default=DEFAULT_SRC, help="unpacked llama.cpp source (build.sh)")
    args = parser.parse_args()
    if not (args.checkpoint / "config.json").is_file():
        sys.exit(f"convert: {args.checkpoint} has no config.json")
    if not (args.src / "convert_hf_to_gguf.py").is_file():
        sys.exit(f"convert: no convert_hf_to_gguf.py in {args.src}: run tools/llamacpp/build.sh first")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    f16 = args.out_dir / "model-f16.gguf"
    if not f16.is_file():
        check_modules()
        partial = f16.with_suffix(".partial")
        convert_f16(args.checkpoint.resolve(), partial, args.src.resolve())
        partial.rename(f16)
    for stem, qtype in QUANTS.items():
        target = args.out_dir / f"model-{stem}.gguf"
        if not target.is_file():
            partial = target.with_suffix(".partial")
            quantize(args.bin, f16, partial, qtype)
            partial.rename(target)
    for path in sorted(args.out_dir.glob("model-*.gguf")):
        print(f"{path}  {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
