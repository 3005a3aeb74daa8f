"""The request and error bodies of every protocol, as pydantic models: the OpenAPI document's
types (hymt/server/openapi.py), for client generators, /docs "Try it out" and fuzzers.

The handlers parse bodies themselves (hymt/server/body.py: JSON or form, each protocol's own
error messages and shapes); these models describe what they accept. Language fields are
plain strings: the valid codes and aliases are listed by each protocol's languages route,
and a wrong one is a 400 that lists them.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from hymt.translate.text_formats import text_format_names

Code = str
_EXAMPLE_TARGET = "de"


class _Body(BaseModel):
    model_config = ConfigDict(extra="allow")


# -- native --------------------------------------------------------------------------------------
class GlossaryEntry(BaseModel):
    source: str = Field(min_length=1)
    target: str = Field(min_length=1)


Glossary = dict[str, str] | list[GlossaryEntry] | list[list[str]]


class SamplingFields(BaseModel):
    """Decoding of the native API (greedy unless set); values checked as the engine does."""

    model_config = ConfigDict(extra="forbid")
    temperature: float | None = Field(None, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    top_k: int | None = Field(None, ge=-1)
    repetition_penalty: float | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    ignore_eos: bool | None = None


class NativeTranslateRequest(_Body):
    text: str | list[str] = Field(description="one text, or a list translated as one batch (in order)",
                                  examples=["Hello world."])
    tgt: Code = Field(examples=[_EXAMPLE_TARGET], description="target language code")
    src: Code = Field("auto", description="source language code, or auto to detect it per text")
    glossary: Glossary | None = Field(None, description="{source: target} terms, or [source, target] pairs")
    context: str | None = None
    style: str | None = None
    format: str | None = Field("text", json_schema_extra={"enum": list(text_format_names())})
    template: str | None = None
    format_type: str | None = Field(None, description="the structured template's data format (JSON, YAML, ...)")
    preferences: list[str] | None = Field(None, description="the personalization template's preference lines")
    candidates: list[str] | None = Field(None, description="candidate translations for the fusion template")
    fusion: int = Field(0, ge=0, le=6, description="Chimera: N sampled candidates, then one fusion request")
    sampling: SamplingFields | None = None
    use_cache: bool | None = None
    retry: bool = True


class NativeDetectRequest(_Body):
    text: str = Field(examples=["Dies ist ein Satz."])


# -- OpenAI --------------------------------------------------------------------------------------
class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ChatMessage(BaseModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None


class _OpenAISampling(_Body):
    temperature: float | None = Field(None, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    top_k: int | None = Field(None, ge=-1)
    repetition_penalty: float | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    ignore_eos: bool | None = None
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    n: Literal[1] = 1
    stream: bool = False


class StreamOptions(BaseModel):
    include_usage: bool = False


class ChatCompletionRequest(_OpenAISampling):
    model: str | None = Field(None, description="any id: the served model answers")
    messages: list[ChatMessage] = Field(min_length=1, examples=[[{
        "role": "user", "content": "Translate the following text into German:\n\nGood morning."}]])
    stream_options: StreamOptions | None = None


class CompletionRequest(_OpenAISampling):
    model: str | None = None
    prompt: str | list[Annotated[int, Field(ge=0)]] = Field(
        description="the model input as is (special tokens included), or the model's token ids")
    return_token_ids: bool = False


# -- LibreTranslate ------------------------------------------------------------------------------
class LibreTranslateRequest(_Body):
    q: str | list[str] = Field(examples=["Hello world."])
    source: Code = "auto"
    target: Code = Field(examples=[_EXAMPLE_TARGET])
    format: Literal["text", "html"] = "text"
    alternatives: int = Field(0, ge=0, le=3)
    api_key: str | None = None


class LibreDetectRequest(_Body):
    q: str = Field(examples=["Bonjour tout le monde."])
    api_key: str | None = None


# -- DeepL ---------------------------------------------------------------------------------------
class DeepLTranslateRequest(_Body):
    text: list[str] = Field(min_length=1, max_length=50, examples=[["Hello world."]])
    target_lang: Code = Field(examples=["DE"])
    source_lang: Code | None = None
    context: str | None = None
    formality: Literal["default", "more", "less", "prefer_more", "prefer_less"] | None = None
    glossary_id: str | None = None
    glossary: Glossary | None = Field(None, description="hymt's inline glossary (not DeepL's)")
    tag_handling: Literal["html", "xml"] | None = None
    split_sentences: str | None = None
    preserve_formatting: bool | str | None = None


class DeepLGlossaryRequest(_Body):
    name: str
    source_lang: Code = Field(examples=["EN"])
    target_lang: Code = Field(examples=["DE"])
    entries: str = Field(examples=["Hello\tHallo"], description="one `source<TAB>target` (or CSV) line per entry")
    entries_format: Literal["tsv", "csv"] = "tsv"


class DeepLLanguagesRequest(_Body):
    type: Literal["source", "target"] = "source"


# -- DeepLX, Immersive ---------------------------------------------------------------------------
class DeepLXRequest(_Body):
    text: str = Field(examples=["Hello world."])
    source_lang: Code = "auto"
    target_lang: Code = Field(examples=["DE"])


class ImmersiveRequest(_Body):
    text_list: list[str] = Field(examples=[["Hello world.", "Good night."]])
    source_lang: Code = "auto"
    target_lang: Code = Field(examples=["zh-CN"])


# -- errors --------------------------------------------------------------------------------------
class NativeErrorDetail(BaseModel):
    message: str
    type: str
    field: str | None = None
    valid: list[str] | None = None


class NativeError(BaseModel):
    error: NativeErrorDetail


class OpenAIErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class OpenAIError(BaseModel):
    error: OpenAIErrorDetail


class LibreTranslateError(BaseModel):
    error: str


class DeepLError(BaseModel):
    message: str


class DeepLXError(BaseModel):
    code: int
    message: str


class ImmersiveError(BaseModel):
    error: str
    code: int


ERROR_MODELS: dict[str, type[BaseModel]] = {
    "native": NativeError, "openai": OpenAIError, "libretranslate": LibreTranslateError, "deepl": DeepLError,
    "deeplx": DeepLXError, "immersive": ImmersiveError,
}
