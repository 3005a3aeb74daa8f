"""The request and error bodies of every protocol, as pydantic models: the OpenAPI document's
types (hymt/server/openapi.py), for client generators, /docs "Try it out" and fuzzers.

The handlers parse bodies themselves (hymt/server/body.py: JSON or form, each protocol's own
error messages and shapes); these models describe what they accept. Language fields are
plain strings: the valid codes and aliases are listed by each protocol's languages route,
and a wrong one is a 400 that lists them.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from hymt.documents.registry import format_names
from hymt.translate.text_formats import text_format_names

Code = str
_EXAMPLE_TARGET = "de"
#: An optional multipart field: a string when sent; a form has no null (absent is the default).
FormText = str | SkipJsonSchema[None]


class _Body(BaseModel):
    model_config = ConfigDict(extra="allow")


def _without_null_defaults(schema: dict[str, Any]) -> None:
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:
            del prop["default"]


def _document_formats(schema: dict[str, Any]) -> None:
    schema["enum"] = ["", *format_names()]  # when the document is built: the formats load on first use
    schema["examples"] = [""]


def _unset(description: str | None = None) -> Any:
    """An optional text part. /docs "Try it out" sends every form field it has a value for, and
    a field without an example gets "string": the empty example is the field left out."""
    return Field(None, description=description, examples=[""])


class _Upload(_Body):
    """A multipart/form-data body: the document in the binary `file` part, the options as text parts."""

    model_config = ConfigDict(json_schema_extra=_without_null_defaults)
    file: bytes = Field(description="the document (a multipart file part); its format follows from the file "
                                    "name's suffix: see GET /api/documents/formats")


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


class NativeDocumentUpload(_Upload):
    tgt: Code = Field(examples=[_EXAMPLE_TARGET], description="target language code")
    src: Code = Field("auto", description="source language code, or auto to detect it")
    format: FormText = Field(None, json_schema_extra=_document_formats,
                             description="the document format (omitted or empty: from the file name's suffix)")
    glossary: FormText = Field(None, description='JSON: {"source": "target"} terms, or [source, target] pairs',
                               examples=['{"Hello": "Hallo"}'])
    context: FormText = _unset()
    style: FormText = _unset()
    template: FormText = _unset()
    sampling: FormText = Field(None, description="JSON: the decoding fields of /api/translate's `sampling`",
                               examples=['{"temperature": 0.7}'])
    use_cache: bool | SkipJsonSchema[None] = Field(None, description="omitted: the server's --cache setting")
    retry: bool = True
    options: FormText = Field(None, description="JSON: the fields above as one object (a field sent beside it "
                                                "wins)", examples=['{"context": "a user manual"}'])
    api_key: FormText = _unset()


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


class LibreTranslateFileUpload(_Upload):
    source: Code = "auto"
    target: Code = Field(examples=["es"])
    api_key: FormText = _unset()


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


class DeepLDictionary(_Body):
    """The entries of one language pair (PUT /v3/glossaries/{id}/dictionaries replaces them)."""

    source_lang: Code = Field(examples=["EN"])
    target_lang: Code = Field(examples=["DE"])
    entries: str = Field(examples=["Hello\tHallo"], description="one `source<TAB>target` (or CSV) line per entry")
    entries_format: Literal["tsv", "csv"] = "tsv"


class DeepLGlossaryRequest(DeepLDictionary):
    """A v2 glossary: one dictionary."""

    name: str = Field(examples=["demo"])


class DeepLV3GlossaryRequest(_Body):
    name: str = Field(examples=["demo"])
    dictionaries: list[DeepLDictionary] = Field(min_length=1)


class DeepLV3GlossaryPatch(_Body):
    """A new name, and/or entries merged into the dictionary of their pair (made if absent)."""

    name: str | None = Field(None, examples=["renamed"])
    dictionaries: list[DeepLDictionary] | None = None


class DeepLLanguagePair(BaseModel):
    """The query of the v3 routes that name one dictionary of a glossary."""

    source_lang: Code = Field(examples=["en"])
    target_lang: Code = Field(examples=["de"])


class DeepLLanguagesRequest(_Body):
    type: Literal["source", "target"] = "source"


class DeepLDocumentUpload(_Upload):
    target_lang: Code = Field(examples=["DE"])
    source_lang: FormText = _unset("omitted or empty: detected")
    formality: Literal["default", "more", "less", "prefer_more", "prefer_less"] | SkipJsonSchema[None] = None
    glossary_id: FormText = _unset("a glossary of the source_lang-target_lang pair (needs source_lang)")
    output_format: FormText = _unset("the suffix of the translated file: only the one hymt writes for the format "
                                     "(a PDF becomes DOCX)")
    api_key: FormText = _unset()


class DeepLDocumentKey(_Body):
    document_key: str = Field(description="the document_key that POST /v2/document answered",
                              examples=["0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"])


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
