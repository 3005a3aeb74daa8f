"""A resolved model directory: config, generation config, tokenizer and chat template.

Every layer reads a checkpoint through here, whether it came from the Hugging Face hub or a
local directory, so the loading code a user's model takes is the one the tests take.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from hymt.errors import ModelLoadError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

#: Files a checkpoint needs; weights are fetched with them.
HUB_PATTERNS = (
    "*.json",
    "*.safetensors",
    "*.jinja",
    "tokenizer*",
    "*.tiktoken",
    "*.model",
)


def resolve_model_dir(model: str | os.PathLike, *, revision: str | None = None) -> Path:
    """A local directory for `model`: itself if it is a directory, else a hub snapshot.

    Raises ModelLoadError naming the id and the local-path alternative when the hub cannot
    be reached or does not hold the repository.
    """
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    name = str(model)
    if path.exists() or name.startswith((".", "/", "~")) or name.count("/") != 1:
        raise ModelLoadError(
            f"model {name!r} is neither an existing directory nor a Hugging Face hub id "
            "(owner/name); pass a local checkpoint directory, e.g. --model /path/to/HY-MT1.5-1.8B"
        )
    return _download(name, revision)


def _hub_offline() -> bool:
    # Read the variable at call time: huggingface_hub reads it once, at import.
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def _download(repo_id: str, revision: str | None) -> Path:
    offline = _hub_offline()
    try:
        from huggingface_hub import snapshot_download

        local = snapshot_download(
            repo_id, revision=revision, allow_patterns=list(HUB_PATTERNS), local_files_only=offline
        )
    except Exception as exc:  # network, auth, offline mode, missing repo: all one answer
        where = "the local Hugging Face cache (HF_HUB_OFFLINE is set)" if offline else "the Hugging Face hub"
        raise ModelLoadError(
            f"could not fetch {repo_id!r} from {where} ({type(exc).__name__}: {exc}). "
            f"Download the checkpoint elsewhere and pass its local directory instead, "
            f"e.g. --model /path/to/{repo_id.split('/')[-1]}"
        ) from exc
    return Path(local)


def _read_json(path: Path, *, required: bool) -> dict:
    if not path.is_file():
        if required:
            raise ModelLoadError(f"{path.parent} is not a model checkpoint: {path.name} is missing")
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ModelLoadError(f"{path} is not valid JSON: {exc}") from exc


@dataclass(frozen=True)
class Checkpoint:
    """Everything but the weights of one checkpoint directory.

    Attributes:
        path: the directory (weights are read from it by the engine's loader).
        config: config.json.
        generation_config: generation_config.json ({} when absent).
        tokenizer: the fast tokenizer from tokenizer.json.
        tokenizer_config: tokenizer_config.json ({} when absent).
        chat_template: chat_template.jinja, or tokenizer_config's chat_template, or None.
    """

    path: Path
    config: dict
    generation_config: dict
    tokenizer: Tokenizer = field(repr=False)
    tokenizer_config: dict = field(default_factory=dict, repr=False)
    chat_template: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def vocab_size(self) -> int:
        return int(self.config.get("vocab_size") or self.tokenizer.get_vocab_size())

    @property
    def bos_token_id(self) -> int | None:
        value = self.generation_config.get("bos_token_id", self.config.get("bos_token_id"))
        return None if value is None else int(value)

    @property
    def pad_token_id(self) -> int | None:
        value = self.generation_config.get("pad_token_id", self.config.get("pad_token_id"))
        return None if value is None else int(value)

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        value = self.generation_config.get("eos_token_id", self.config.get("eos_token_id"))
        if value is None:
            return ()
        values = value if isinstance(value, list) else [value]
        return tuple(dict.fromkeys(int(v) for v in values))

    @cached_property
    def special_tokens(self) -> dict[str, int]:
        """Special-token text -> id, from the tokenizer's added tokens."""
        decoder = self.tokenizer.get_added_tokens_decoder()
        return {tok.content: idx for idx, tok in decoder.items() if tok.special}

    def token_id(self, text: str) -> int | None:
        """The id of a single (special) token's text, or None if the vocabulary lacks it."""
        return self.tokenizer.token_to_id(text)

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`; special-token text inside it maps to its id, nothing is added."""
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    @cached_property
    def _text_tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(self.tokenizer.to_str())
        tokenizer.encode_special_tokens = True
        return tokenizer

    def encode_text(self, text: str) -> list[int]:
        """Token ids of user text: special-token strings inside it are plain characters (a
        user who types `<|eos|>` sends those characters, never the control token)."""
        return self._text_tokenizer.encode(text, add_special_tokens=False).ids

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)


#: What names a checkpoint: a loaded one, its directory, or a hub id.
CheckpointSource = str | os.PathLike | Checkpoint


def load_checkpoint(model: CheckpointSource, *, revision: str | None = None) -> Checkpoint:
    """Resolve `model` (hub id or directory) and read its config and tokenizer."""
    if isinstance(model, Checkpoint):
        return model
    from tokenizers import Tokenizer

    path = resolve_model_dir(model, revision=revision)
    config = _read_json(path / "config.json", required=True)
    tokenizer_file = path / "tokenizer.json"
    if not tokenizer_file.is_file():
        raise ModelLoadError(f"{path} has no tokenizer.json (a fast tokenizer is required)")
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer_config = _read_json(path / "tokenizer_config.json", required=False)
    template_file = path / "chat_template.jinja"
    chat_template = (
        template_file.read_text(encoding="utf-8")
        if template_file.is_file()
        else tokenizer_config.get("chat_template")
    )
    return Checkpoint(
        path=path,
        config=config,
        generation_config=_read_json(path / "generation_config.json", required=False),
        tokenizer=tokenizer,
        tokenizer_config=tokenizer_config,
        chat_template=chat_template,
    )
