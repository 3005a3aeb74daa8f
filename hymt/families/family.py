"""ModelFamily: what one Hunyuan translation model needs beyond its weights.

Chat format, stop tokens, official sampling defaults and the prompt templates it was trained
with. Token ids are never constants here: they are looked up in the loaded checkpoint
(docs/reference/models.md: "read the checkpoint actually loaded").
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hymt.engine.sampling import SamplingParams
from hymt.errors import ModelLoadError
from hymt.families.chat_format import ChatFormat, render_jinja, special_tokens

if TYPE_CHECKING:  # hymt.checkpoint loads tokenizers; only its type is needed here
    from hymt.checkpoint import Checkpoint

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelFamily:
    """One model family (one released checkpoint line).

    Attributes:
        name: the official name, e.g. "HY-MT1.5-1.8B".
        generation: "hunyuan-mt" | "chimera" | "hy-mt1.5" | "hy-mt2" (picks the template set).
        size: "1.8B" | "7B" (picks tokenizer and chat format line).
        hub_id: the Hugging Face repository of the BF16 checkpoint.
        templates: canonical names of the prompt templates it supports (docs/reference/models.md §7.5).
        default_sampling: the official sampling values; greedy is SamplingParams().
        add_generation_prompt: what the family's README passes to apply_chat_template.
        chat_format: the built-in format, byte-identical to the checkpoint's jinja rendering.
        stop_tokens: token strings that end an answer, looked up in the checkpoint's tokenizer.
    """

    name: str
    generation: str
    size: str
    hub_id: str
    templates: frozenset[str]
    default_sampling: SamplingParams
    add_generation_prompt: bool
    chat_format: ChatFormat
    stop_tokens: tuple[str, ...]

    def supports(self, template: str) -> bool:
        """True when `template` (canonical name or alias) is one of this family's templates."""
        from hymt.families.prompt_spec import canonical_template

        return canonical_template(template) in self.templates

    def render_chat(self, user_text: str, checkpoint: Checkpoint | None = None) -> str:
        """The full model input for one user turn, special tokens included.

        Uses the checkpoint's chat template when it has one (the authoritative format), else
        the built-in format. Tokenize the result without adding special tokens.
        """
        if checkpoint is not None and checkpoint.chat_template:
            return render_jinja(
                checkpoint.chat_template,
                user_text,
                add_generation_prompt=self.add_generation_prompt,
                tokens=_template_tokens(checkpoint),
            )
        if checkpoint is not None:
            missing = [t for t in self.stop_tokens if checkpoint.tokenizer.token_to_id(t) is None]
            if missing:
                logger.warning(
                    "%s has no token %s: the %s chat format will not tokenize as special tokens",
                    checkpoint.path, missing[0], self.name,
                )
        return self.chat_format.render(user_text)

    def stop_token_ids(self, checkpoint: Checkpoint) -> tuple[int, ...]:
        """Ids that end generation: the checkpoint's eos ids, then the family's stop tokens.

        Raises:
            ModelLoadError: none of them exists in the checkpoint.
        """
        ids = list(checkpoint.eos_token_ids)
        for token in self.stop_tokens:
            token_id = checkpoint.tokenizer.token_to_id(token)
            if token_id is None:
                logger.warning("%s: stop token %r is not in the tokenizer", self.name, token)
            else:
                ids.append(token_id)
        if not ids:
            raise ModelLoadError(
                f"{checkpoint.path}: no eos_token_id in generation_config.json/config.json and none of "
                f"{list(self.stop_tokens)} in the tokenizer; is this a {self.name} checkpoint?"
            )
        return tuple(dict.fromkeys(int(i) for i in ids))


def _template_tokens(checkpoint: Checkpoint) -> dict[str, object]:
    """Special-token variables for the chat template; bos_token falls back to the config's id."""
    tokens = special_tokens(checkpoint.tokenizer_config)
    if "bos_token" not in tokens and checkpoint.bos_token_id is not None:
        bos = checkpoint.tokenizer.id_to_token(checkpoint.bos_token_id)
        if bos is not None:
            tokens["bos_token"] = bos
    return tokens
