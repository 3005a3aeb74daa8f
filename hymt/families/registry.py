"""The model families hymt serves, lookup by name, and detection from a checkpoint.

Detection has two questions. The size line (1.8B "hy" tokenizer vs 7B Hunyuan tokenizer)
decides the chat format and stop tokens; it comes from the tokenizer's special tokens and
the config. The generation (Hunyuan-MT, Chimera, HY-MT1.5, Hy-MT2) decides the prompt
templates; the weights cannot tell it, so it comes from names: config `_name_or_path`, the
directory name (or the hub cache folder), the README / model card.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError, ModelLoadError
from hymt.families.chat_format import ChatFormat
from hymt.families.family import ModelFamily

if TYPE_CHECKING:
    from hymt.checkpoint import Checkpoint

logger = logging.getLogger(__name__)

# Chat formats (docs/reference/models.md §5), without a system turn.
_CHAT_7B = ChatFormat("<|startoftext|>", "<|extra_0|>")
_CHAT_MT2_1_8B = ChatFormat("<｜hy_begin▁of▁sentence｜><｜hy_User｜>", "<｜hy_Assistant｜>")
# HY-MT1.5-1.8B README renders with add_generation_prompt=False: the turn ends with no▁8 (§5.3).
_CHAT_HYMT15_1_8B = ChatFormat("<｜hy_begin▁of▁sentence｜><｜hy_User｜>", "<｜hy_place▁holder▁no▁8｜>")

# Stop tokens (docs/reference/models.md §6); <|endoftext|> is added only when generation_config lists it.
_STOP_7B = ("<|eos|>",)
_STOP_1_8B = ("<｜hy_place▁holder▁no▁2｜>",)

# Official sampling (docs/reference/models.md §8).
_SAMPLING_2048 = SamplingParams(temperature=0.7, top_p=0.6, top_k=20, repetition_penalty=1.05, max_tokens=2048)
_SAMPLING_4096 = _SAMPLING_2048.replace(max_tokens=4096)

_HYMT15_TEMPLATES = frozenset({"default", "terminology", "context", "formatted"})
_MT2_TEMPLATES = frozenset(
    {"default", "terminology", "context", "style", "personalization", "delimiters", "structured"}
)

FAMILIES: tuple[ModelFamily, ...] = (
    ModelFamily("HY-MT1.5-1.8B", "hy-mt1.5", "1.8B", "tencent/HY-MT1.5-1.8B", _HYMT15_TEMPLATES,
                _SAMPLING_2048, False, _CHAT_HYMT15_1_8B, _STOP_1_8B),
    ModelFamily("HY-MT1.5-7B", "hy-mt1.5", "7B", "tencent/HY-MT1.5-7B", _HYMT15_TEMPLATES,
                _SAMPLING_2048, False, _CHAT_7B, _STOP_7B),
    ModelFamily("Hunyuan-MT-7B", "hunyuan-mt", "7B", "tencent/Hunyuan-MT-7B", frozenset({"default"}),
                _SAMPLING_2048, False, _CHAT_7B, _STOP_7B),
    ModelFamily("Hunyuan-MT-Chimera-7B", "chimera", "7B", "tencent/Hunyuan-MT-Chimera-7B",
                frozenset({"default", "fusion"}), _SAMPLING_2048, False, _CHAT_7B, _STOP_7B),
    ModelFamily("Hy-MT2-1.8B", "hy-mt2", "1.8B", "tencent/Hy-MT2-1.8B", _MT2_TEMPLATES,
                _SAMPLING_4096, True, _CHAT_MT2_1_8B, _STOP_1_8B),
    ModelFamily("Hy-MT2-7B", "hy-mt2", "7B", "tencent/Hy-MT2-7B", _MT2_TEMPLATES,
                _SAMPLING_4096, True, _CHAT_7B, _STOP_7B),
)

#: The model served when none is named: the small, current translation model.
DEFAULT_MODEL = "tencent/HY-MT1.5-1.8B"

#: The family used when only the size is known: the newest generation of that size.
_NEWEST = {"1.8B": "Hy-MT2-1.8B", "7B": "Hy-MT2-7B"}


def _key(name: str) -> str:
    return name.strip().casefold().replace("_", "-")


_BY_NAME = {_key(k): f for f in FAMILIES for k in (f.name, f.hub_id, f.hub_id.split("/")[1])}


def family_names() -> tuple[str, ...]:
    return tuple(f.name for f in FAMILIES)


def get_family(name: str | ModelFamily) -> ModelFamily:
    """The family with this official name or hub id (case-insensitive, `_` == `-`)."""
    if isinstance(name, ModelFamily):
        return name
    family = _BY_NAME.get(_key(name)) if isinstance(name, str) else None
    if family is None:
        raise InvalidInputError(
            f"unknown model family {name!r}; valid families: {', '.join(family_names())}", field="family"
        )
    return family


def detect_family(checkpoint: Checkpoint, family: str | ModelFamily | None = None) -> ModelFamily:
    """The family of a loaded checkpoint; an explicit `family` always wins.

    Raises:
        ModelLoadError: the checkpoint is not a dense Hunyuan translation model.
    """
    if family is not None:
        return get_family(family)
    size = _detect_size(checkpoint)
    generation, hint = _detect_generation(checkpoint)
    if generation is not None:
        for candidate in FAMILIES:
            if candidate.size == size and candidate.generation == generation:
                return candidate
        logger.warning("%s: the name %r says %s but the model is %s", checkpoint.path, hint, generation, size)
    chosen = get_family(_NEWEST[size])
    logger.warning(
        "%s: cannot tell which %s generation this is from its names; assuming %s (pass family= to choose)",
        checkpoint.path, size, chosen.name,
    )
    return chosen


_SIZE_BY_HIDDEN = {2048: "1.8B", 4096: "7B"}
_SIZE_BY_VOCAB = {120818: "1.8B", 128167: "7B"}


def _detect_size(checkpoint: Checkpoint) -> str:
    config = checkpoint.config
    if config.get("model_type") == "hy_v3":
        raise ModelLoadError(
            f"{checkpoint.path} is a hy_v3 MoE checkpoint (Hy-MT2-30B-A3B), which hymt does not serve; "
            f"supported families: {', '.join(family_names())}"
        )
    tokenizer = checkpoint.tokenizer
    has_hy = tokenizer.token_to_id("<｜hy_User｜>") is not None
    has_7b = tokenizer.token_to_id("<|extra_0|>") is not None
    by_tokens = "1.8B" if has_hy and not has_7b else "7B" if has_7b and not has_hy else None
    by_config = _SIZE_BY_HIDDEN.get(int(config.get("hidden_size") or 0)) or _SIZE_BY_VOCAB.get(
        int(config.get("vocab_size") or 0))
    if by_tokens and by_config and by_tokens != by_config:
        # The tokenizer decides the chat format, so it wins over the shape.
        logger.warning("%s: tokenizer says %s, config says %s; using %s", checkpoint.path, by_tokens,
                       by_config, by_tokens)
    size = by_tokens or by_config
    if size is None:
        raise ModelLoadError(
            f"{checkpoint.path}: not a Hunyuan translation checkpoint (no <｜hy_User｜> or <|extra_0|> token, "
            f"hidden_size {config.get('hidden_size')}); supported families: {', '.join(family_names())}"
        )
    return size


# Generation name patterns, matched on lower-case text with `_` and spaces read as `-`.
_GENERATION_PATTERNS = (
    ("chimera", re.compile(r"(?:hunyuan-?mt-?)?chimera")),
    ("hy-mt2", re.compile(r"hy-?mt-?2(?:\.0)?(?![\d.])")),
    ("hy-mt1.5", re.compile(r"hy-?mt-?1\.?5(?!\d)")),
    ("hunyuan-mt", re.compile(r"hunyuan-?mt(?!-?chimera)|hunyuan-7b-mt")),
)
_README_CHARS = 8000  # a model card names its own model near the top


def _detect_generation(checkpoint: Checkpoint) -> tuple[str | None, str | None]:
    """(generation, the hint that named it), or (None, None)."""
    for hint in _name_hints(checkpoint):
        generation = _earliest_generation(hint)
        if generation is not None:
            return generation, hint[:80]
    return None, None


def _name_hints(checkpoint: Checkpoint) -> list[str]:
    path = Path(checkpoint.path)
    hints = [str(checkpoint.config.get("_name_or_path") or ""), path.name]
    # A hub cache snapshot lives in .../models--tencent--HY-MT1.5-1.8B/snapshots/<hash>.
    # Other parent folders are not hints (they name experiments, test cases, ...).
    hints += [part for part in path.parts if part.startswith("models--")]
    for card in ("README.md", "README_CN.md"):
        try:
            hints.append((path / card).read_text(encoding="utf-8", errors="replace")[:_README_CHARS])
        except OSError:
            continue
    return [h for h in hints if h]


def _earliest_generation(text: str) -> str | None:
    text = re.sub(r"[_\s]", "-", text.lower())
    found = [(m.start(), gen) for gen, pattern in _GENERATION_PATTERNS if (m := pattern.search(text))]
    return min(found)[1] if found else None
